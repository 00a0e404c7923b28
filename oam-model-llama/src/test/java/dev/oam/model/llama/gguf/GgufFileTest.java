package dev.oam.model.llama.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.oam.testing.gguf.TinyGguf;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import org.assertj.core.api.AbstractThrowableAssert;
import org.assertj.core.api.InstanceOfAssertFactories;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(120)
class GgufFileTest {
    private static final byte[] TINY = TinyGguf.tiny().bytes();

    @TempDir
    static Path dir;

    private static Path tiny;

    @BeforeAll
    static void writeTiny() throws IOException {
        tiny = dir.resolve("tiny.gguf");
        Files.write(tiny, TINY);
    }

    @Test
    void readsTheTinyModel() throws Exception {
        GgufFile file = GgufFile.read(tiny);
        assertThat(file.path()).isEqualTo(tiny);
        assertThat(file.fileSize()).isEqualTo(TINY.length);
        assertThat(file.version()).isEqualTo(3);
        assertThat(file.architecture()).isEqualTo("llama");
        assertThat(file.name()).isEqualTo("tiny-random-llama");
        assertThat(file.contextLength()).isEqualTo(4096);
        assertThat(file.chatTemplate()).isEqualTo(TinyGguf.CHATML_TEMPLATE);
        assertThat(file.tokens().subList(0, 6))
                .containsExactly("<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>", "<0x00>");
        assertThat(file.tokens()).contains("\u2581goblin", "open_gate", "café");
        assertThat(file.controlTokens()).containsExactly("<s>", "</s>", "<|im_start|>", "<|im_end|>");
        assertThat(file.tensorCount()).isEqualTo(21);

        Map<String, Object> metadata = file.metadata();
        assertThat(metadata).hasSize(26);
        assertThat(metadata.get("llama.embedding_length")).isEqualTo(64L);
        assertThat(metadata.get("llama.attention.layer_norm_rms_epsilon")).isEqualTo((double) 1e-5f);
        assertThat(metadata.get("tokenizer.ggml.add_space_prefix")).isEqualTo(false);
        assertThat(metadata.get("tokenizer.ggml.token_type"))
                .asInstanceOf(InstanceOfAssertFactories.LIST)
                .hasSize(file.tokens().size())
                .startsWith(2L, 3L, 3L, 3L, 3L, 6L);
        assertThat(metadata.get("tokenizer.ggml.scores"))
                .asInstanceOf(InstanceOfAssertFactories.LIST)
                .element(0)
                .isEqualTo(0.0);
        assertThat(metadata.keySet()).startsWith("general.architecture", "general.name");
    }

    @Test
    void tensorsAreAlignedAndFillTheFile() throws Exception {
        for (byte[] bytes : List.of(TINY, TinyGguf.tiny().f16(true).bytes())) {
            GgufFile file = GgufFile.read(write("layout.gguf", bytes));
            assertThat(file.dataOffset() % 32).isZero();
            long expected = 0;
            for (GgufFile.Tensor t : file.tensors()) {
                assertThat(t.offset()).as(t.name()).isEqualTo(expected).matches(o -> o % 32 == 0);
                expected = (t.offset() + t.size() + 31) / 32 * 32;
                int wanted = t.shape().size() == 1 ? 0 : (bytes == TINY ? 0 : 1); // norms stay F32
                assertThat(t.type()).as(t.name()).isEqualTo(wanted);
            }
            GgufFile.Tensor last = file.tensors().getLast();
            assertThat(file.dataOffset() + last.offset() + last.size()).isEqualTo(file.fileSize());
            assertThat(file.tensors().getFirst().name()).isEqualTo("token_embd.weight");
            assertThat(file.tensors().getFirst().shape())
                    .containsExactly(64L, (long) file.tokens().size());
        }
    }

    @Test
    void groupedQueryAttentionShrinksKeysAndValues() throws Exception {
        GgufFile file = GgufFile.read(
                write("gqa.gguf", TinyGguf.tiny().heads(4).kvHeads(2).bytes()));
        Map<String, List<Long>> shapes = new java.util.HashMap<>();
        file.tensors().forEach(t -> shapes.put(t.name(), t.shape()));
        assertThat(shapes.get("blk.1.attn_q.weight")).containsExactly(64L, 64L);
        assertThat(shapes.get("blk.1.attn_k.weight")).containsExactly(64L, 32L);
        assertThat(shapes.get("blk.1.attn_v.weight")).containsExactly(64L, 32L);
        assertThat(file.metadata().get("llama.attention.head_count_kv")).isEqualTo(2L);
    }

    @Test
    void aModelWithoutTemplateHasNone() throws Exception {
        GgufFile file = GgufFile.read(
                write("plain.gguf", TinyGguf.tiny().chatTemplate(null).name("x").bytes()));
        assertThat(file.chatTemplate()).isNull();
        assertThat(file.name()).isEqualTo("x");
    }

    @Test
    void versionTwoIsRead() throws Exception {
        byte[] v2 = TINY.clone();
        v2[4] = 2;
        assertThat(GgufFile.read(write("v2.gguf", v2)).version()).isEqualTo(2);
    }

    // --- the file itself ---

    @Test
    void aMissingFileIsNamed() {
        Path missing = dir.resolve("nope/missing.gguf");
        assertRefused(missing).hasMessage("Model file " + missing + " does not exist");
    }

    @Test
    void aDirectoryIsRefused() {
        assertRefused(dir).hasMessage("Model file " + dir + " is a directory, not a GGUF file");
    }

    @Test
    void anUnreadableFileIsRefused() throws Exception {
        Path file = write("secret.gguf", TINY);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("---------"));
        try {
            assumeFalse(Files.isReadable(file), "running as root: permissions are not enforced");
            assertRefused(file).hasMessage("Model file " + file + " cannot be read: permission denied");
        } finally {
            Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        }
    }

    @Test
    void otherFormatsAreNotGguf() throws Exception {
        Path zip = write("model.zip.gguf", new byte[] {'P', 'K', 3, 4, 0, 0, 0, 0});
        assertRefused(zip)
                .hasMessage("Model file " + zip
                        + " is not a GGUF file (it starts with \"PK\\x03\\x04\" instead of \"GGUF\"); llama.cpp models are"
                        + " .gguf files");
        Path empty = write("empty.gguf", new byte[0]);
        assertRefused(empty).hasMessage("Model file " + empty + " is empty, not a GGUF file");
        Path shortFile = write("short.gguf", "GG".getBytes(StandardCharsets.US_ASCII));
        assertRefused(shortFile).hasMessageContaining("is not a GGUF file (it starts with \"GG\"");
        Path html = write("page.gguf", "<!DOCTYPE html>".getBytes(StandardCharsets.US_ASCII));
        assertRefused(html).hasMessageContaining("it starts with \"<!DO\"");
    }

    @Test
    void unsupportedVersionsAreNamed() throws Exception {
        for (int version : new int[] {1, 4, -1}) {
            byte[] bytes = TINY.clone();
            putU32(bytes, 4, version);
            Path file = write("v.gguf", bytes);
            assertRefused(file)
                    .hasMessage(
                            "Model file " + file + " uses GGUF version " + Integer.toUnsignedString(version)
                                    + ", which is not supported (versions 2 and 3 are); convert it again with a recent llama.cpp");
        }
    }

    // --- truncated and corrupt ---

    @Test
    void aTruncatedDownloadIsRefused() throws Exception {
        Path file = write("cut.gguf", Arrays.copyOf(TINY, TINY.length - 1));
        assertRefused(file)
                .hasMessageStartingWith("Model file " + file + " is truncated or corrupt: tensor 'output.weight'")
                .hasMessageContaining("but the file has only " + (TINY.length - 1));
        Path inHeader = write("cut.gguf", Arrays.copyOf(TINY, 5000));
        assertRefused(inHeader).hasMessageStartingWith("Model file " + inHeader + " is truncated or corrupt: ");
    }

    @Test
    void countsBeyondTheFileAreRefusedWithoutAllocating() throws Exception {
        byte[] tensors = TINY.clone();
        putU64(tensors, 8, 1L << 40);
        assertRefused(write("t.gguf", tensors)).hasMessageContaining("claims 1099511627776 tensors at byte 8,");
        byte[] keys = TINY.clone();
        putU64(keys, 16, -1L);
        assertRefused(write("k.gguf", keys))
                .hasMessageContaining("claims 18446744073709551615 metadata entries at byte 16,");

        byte[] name = TINY.clone();
        putU64(name, valueOffset(name, "general.name") + 4, Long.MAX_VALUE);
        assertRefused(write("n.gguf", name))
                .hasMessageContaining("the value of 'general.name' at byte " + (valueOffset(name, "general.name") + 4)
                        + " claims " + Long.MAX_VALUE + " bytes, but only");

        byte[] array = TINY.clone();
        putU64(array, valueOffset(array, "tokenizer.ggml.tokens") + 8, 1L << 31);
        assertRefused(write("a.gguf", array))
                .hasMessageContaining("claims 2147483648 values in 'tokenizer.ggml.tokens'");
    }

    @Test
    void unknownValueTypesAndNestedListsAreRefused() throws Exception {
        byte[] unknown = TINY.clone();
        putU32(unknown, valueOffset(unknown, "general.name"), 13);
        assertRefused(write("u.gguf", unknown)).hasMessageEndingWith("'general.name' has the unknown value type 13");

        byte[] nested = TINY.clone();
        putU32(nested, valueOffset(nested, "tokenizer.ggml.tokens") + 4, 9);
        assertRefused(write("nested.gguf", nested))
                .hasMessageEndingWith("'tokenizer.ggml.tokens' is a list of lists, which llama.cpp models do not use");

        byte[] elements = TINY.clone();
        putU32(elements, valueOffset(elements, "tokenizer.ggml.scores") + 4, 200);
        assertRefused(write("e.gguf", elements))
                .hasMessageEndingWith("'tokenizer.ggml.scores' is a list of the unknown value type 200");
    }

    @Test
    void badTensorInfosAreRefused() throws Exception {
        // the tensor info of output.weight: its name's length (13) and text, n_dims, ne[2], type, offset
        int dims = indexOf(TINY, "\r\0\0\0\0\0\0\0output.weight", 0) + 8 + 13;
        byte[] type = TINY.clone();
        putU32(type, dims + 4 + 16, 4); // the removed Q4_2
        assertRefused(write("type.gguf", type)).hasMessageContaining("unknown ggml type 4");
        byte[] offset = TINY.clone();
        putU64(offset, dims + 4 + 16 + 4, 33);
        assertRefused(write("off.gguf", offset))
                .hasMessageContaining("starts at 33, not a multiple of the alignment 32");
        byte[] rank = TINY.clone();
        putU32(rank, dims, 5);
        assertRefused(write("rank.gguf", rank)).hasMessageContaining("has 5 dimensions (1 to 4 allowed)");
    }

    // --- missing what a model needs ---

    @Test
    void requiredKeysAreNamed() throws Exception {
        assertRefused(write("a.gguf", rename(TINY, "general.architecture", "general.architecturX")))
                .hasMessageEndingWith("has no 'general.architecture' entry; it is not a complete llama.cpp model");
        assertRefused(write("c.gguf", rename(TINY, "llama.context_length", "llama.context_lengtX")))
                .hasMessageEndingWith("has no 'llama.context_length' entry; it is not a complete llama.cpp model");
        assertRefused(write("t.gguf", rename(TINY, "tokenizer.ggml.tokens", "tokenizer.ggml.tokenX")))
                .hasMessageEndingWith("has no 'tokenizer.ggml.tokens' entry; it is not a complete llama.cpp model");

        byte[] wrongType = TINY.clone();
        putU32(wrongType, valueOffset(wrongType, "llama.context_length"), 7); // bool: reads 1 byte, then garbage
        assertRefused(write("w.gguf", wrongType)).hasMessageContaining("Model file ");
    }

    @Test
    void contextLengthMustBePositive() throws Exception {
        byte[] zero = TINY.clone();
        putU32(zero, valueOffset(zero, "llama.context_length") + 4, 0);
        Path file = write("zero.gguf", zero);
        assertRefused(file)
                .hasMessage(
                        "Model file " + file
                                + " declares a context length of 0 (llama.context_length); it must be between 1 and 2147483647");

        byte[] negative = TINY.clone();
        putU32(negative, valueOffset(negative, "llama.context_length"), 5); // i32
        putU32(negative, valueOffset(negative, "llama.context_length") + 4, -1);
        assertRefused(write("neg.gguf", negative)).hasMessageContaining("declares a context length of -1");
    }

    @Test
    void withoutTokenTypesControlTokensAreGuessedFromTheirShape() throws Exception {
        GgufFile file =
                GgufFile.read(write("nt.gguf", rename(TINY, "tokenizer.ggml.token_type", "tokenizer.ggml.token_typX")));
        assertThat(file.controlTokens()).containsExactly("<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>");
    }

    // --- hostile input ---

    @Test
    void everyTruncationIsRefused() throws Exception {
        Random random = new Random(1);
        int header = (int) GgufFile.read(tiny).dataOffset();
        for (int i = 0; i < 400; i++) {
            int length = i < 200 ? i : random.nextInt(i < 350 ? header : TINY.length);
            Path file = write("trunc.gguf", Arrays.copyOf(TINY, length));
            try {
                GgufFile.read(file);
                fail("a file cut at " + length + " of " + TINY.length + " bytes was accepted");
            } catch (GgufException expected) {
                assertThat(expected.getMessage()).startsWith("Model file " + file + " ");
            }
        }
    }

    @Test
    void flippedHeaderBytesGiveAGgufExceptionOrAModel() throws Exception {
        int header = (int) GgufFile.read(tiny).dataOffset();
        Path file = write("flip.gguf", TINY);
        int read = 0;
        for (int seed = 0; seed < 4000; seed++) {
            Random random = new Random(seed);
            byte[] bytes = Arrays.copyOf(TINY, header);
            int flips = 1 + random.nextInt(3);
            for (int f = 0; f < flips; f++) {
                // bias towards the first bytes, where the counts and the keys are
                int at = random.nextBoolean() ? random.nextInt(Math.min(header, 1200)) : random.nextInt(header);
                bytes[at] = random.nextInt(4) == 0
                        ? (byte) random.nextInt()
                        : (byte) (bytes[at] ^ (1 << random.nextInt(8)));
            }
            try (var channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
                channel.write(ByteBuffer.wrap(bytes), 0); // only the header changes; the tensor data stays
            }
            try {
                GgufFile.read(file);
                read++;
            } catch (GgufException expected) {
                assertThat(expected.getMessage()).as("seed %d", seed).startsWith("Model file " + file + " ");
            } catch (Throwable t) {
                throw new AssertionError("seed " + seed + " made the reader throw " + t, t);
            }
        }
        assertThat(read)
                .as("most flips hit token text or scores and still read")
                .isBetween(200, 3990);
    }

    @Test
    void aLargeVocabularyIsReadWhole() throws Exception {
        int n = 150_000;
        Raw raw = new Raw().header(0, 4);
        raw.string("general.architecture").u32(8).string("llama");
        raw.string("llama.context_length").u32(4).u32(8192);
        raw.string("tokenizer.ggml.tokens").u32(9).u32(8).u64(n);
        for (int i = 0; i < n; i++) {
            raw.string(i < 3 ? "<|special" + i + "|>" : "\u2581token" + i);
        }
        raw.string("tokenizer.ggml.token_type").u32(9).u32(5).u64(n);
        for (int i = 0; i < n; i++) {
            raw.u32(i < 3 ? 3 : 1);
        }
        Path file = write("big-vocab.gguf", raw.bytes());

        GgufFile model = GgufFile.read(file);
        assertThat(model.tokens()).hasSize(n).endsWith("\u2581token149999");
        assertThat(model.controlTokens()).isEqualTo(Set.of("<|special0|>", "<|special1|>", "<|special2|>"));
        assertThat(model.tensorCount()).isZero();
    }

    @Test
    void metadataBeyondTheHeaderLimitIsRefused() throws Exception {
        Raw raw = new Raw().header(0, 1);
        raw.string("general.architecture").u32(9).u32(0).u64(GgufFile.MAX_HEADER_BYTES);
        Path file = dir.resolve("huge-header.gguf");
        Files.write(file, raw.bytes());
        try (var channel = java.nio.channels.FileChannel.open(file, java.nio.file.StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.wrap(new byte[1]), GgufFile.MAX_HEADER_BYTES + 100); // sparse
        }
        assertRefused(file).hasMessageContaining("values in 'general.architecture'");
    }

    // --- helpers ---

    private static AbstractThrowableAssert<?, ? extends Throwable> assertRefused(Path file) {
        return assertThatThrownBy(() -> GgufFile.read(file)).isInstanceOf(GgufException.class);
    }

    private static Path write(String name, byte[] bytes) throws IOException {
        Path file = dir.resolve(name);
        Files.write(file, bytes);
        return file;
    }

    /** Where the value type of {@code key} is (the u32 after the key's text). */
    private static int valueOffset(byte[] bytes, String key) {
        int at = indexOf(bytes, key, 0);
        assertThat(at).as(key).isPositive();
        return at + key.getBytes(StandardCharsets.UTF_8).length;
    }

    private static byte[] rename(byte[] bytes, String key, String sameLength) {
        byte[] copy = bytes.clone();
        byte[] replacement = sameLength.getBytes(StandardCharsets.UTF_8);
        System.arraycopy(replacement, 0, copy, indexOf(bytes, key, 0), replacement.length);
        return copy;
    }

    private static int indexOf(byte[] haystack, String needle, int from) {
        byte[] n = needle.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = from; i + n.length <= haystack.length; i++) {
            for (int j = 0; j < n.length; j++) {
                if (haystack[i + j] != n[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static void putU32(byte[] bytes, int at, int value) {
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putInt(at, value);
    }

    private static void putU64(byte[] bytes, int at, long value) {
        ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).putLong(at, value);
    }

    /** Hand-written GGUF bytes for shapes the generator does not make. */
    private static final class Raw {
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();

        Raw header(long tensors, long keys) {
            out.writeBytes("GGUF".getBytes(StandardCharsets.US_ASCII));
            return u32(3).u64(tensors).u64(keys);
        }

        Raw u32(int value) {
            out.writeBytes(ByteBuffer.allocate(4)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .putInt(value)
                    .array());
            return this;
        }

        Raw u64(long value) {
            out.writeBytes(ByteBuffer.allocate(8)
                    .order(ByteOrder.LITTLE_ENDIAN)
                    .putLong(value)
                    .array());
            return this;
        }

        Raw string(String s) {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            u64(utf8.length);
            out.writeBytes(utf8);
            return this;
        }

        byte[] bytes() {
            return out.toByteArray();
        }
    }
}
