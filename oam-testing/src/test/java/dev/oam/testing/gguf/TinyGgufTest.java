package dev.oam.testing.gguf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

@Timeout(60)
class TinyGgufTest {

    // Computed once from this generator. A change here changes every model-based test's fixture: only update
    // the hashes on purpose, together with the generator.
    private static final String TINY_F32_SHA256 = "8b4c0c2ab3fa4fc16e33d9325ede14269c74d4435e227570510e1f2f2199e4ea";
    private static final String TINY_F16_SHA256 = "d9085660954f3494ed236525d0d97199abd965ddd0393d9863d6bdb6cf7c103a";

    @Test
    void tinyF32IsByteStable() {
        byte[] bytes = TinyGguf.tiny().bytes();
        assertThat(bytes).hasSize(1_126_208);
        assertThat(sha256(bytes)).isEqualTo(TINY_F32_SHA256);
        assertThat(TinyGguf.builder().bytes()).isEqualTo(bytes);
    }

    @Test
    void tinyF16IsByteStable() {
        byte[] bytes = TinyGguf.tiny().f16(true).bytes();
        assertThat(bytes).hasSize(578_880);
        assertThat(sha256(bytes)).isEqualTo(TINY_F16_SHA256);
    }

    @Test
    void sameSeedGivesSameBytesAndAnotherSeedChangesOnlyTheTensorData() {
        TinyGguf.Builder a = TinyGguf.tiny().seed(7);
        byte[] first = a.bytes();
        assertThat(TinyGguf.tiny().seed(7).bytes()).isEqualTo(first);

        byte[] other = TinyGguf.tiny().seed(8).bytes();
        assertThat(other).hasSameSizeAs(first);
        int header = (int) a.headerSize();
        assertThat(Arrays.copyOf(other, header)).isEqualTo(Arrays.copyOf(first, header));
        int differing = 0;
        for (int i = header; i < first.length; i++) {
            if (first[i] != other[i]) {
                differing++;
            }
        }
        // the norms (all 1.0) and padding stay; nearly every weight byte changes
        assertThat(differing).isGreaterThan((first.length - header) / 2);
    }

    @Test
    void writeStreamsTheSameBytesAsBytes(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("models/tiny.gguf");
        TinyGguf.tiny().f16(true).write(file);
        assertThat(Files.readAllBytes(file)).isEqualTo(TinyGguf.tiny().f16(true).bytes());
        try (var files = Files.list(file.getParent())) {
            assertThat(files).containsExactly(file); // no temporary file left behind
        }
    }

    @Test
    void nullChatTemplateOmitsTheKey() {
        byte[] with = TinyGguf.tiny().bytes();
        byte[] without = TinyGguf.tiny().chatTemplate(null).bytes();
        assertThat(indexOf(with, "tokenizer.chat_template")).isPositive();
        assertThat(indexOf(with, TinyGguf.CHATML_TEMPLATE)).isPositive();
        assertThat(indexOf(without, "tokenizer.chat_template")).isEqualTo(-1);
        assertThat(indexOf(without, "<|im_start|>assistant")).isEqualTo(-1);
        // the key count in the header (u64 at byte 16) follows
        assertThat(with[16]).isEqualTo((byte) 26);
        assertThat(without[16]).isEqualTo((byte) 25);
    }

    @Test
    void midHasTheSizeItsDimensionsGive(@TempDir Path dir) throws Exception {
        TinyGguf.Builder mid = TinyGguf.mid();
        Path file = dir.resolve("mid.gguf");
        mid.write(file);

        long vocab = TinyGguf.tokens().size();
        long embd = 512;
        long ff = 1536;
        long f16 = 2;
        long f32 = 4;
        long perLayer = align(embd * f32) * 2 // attn_norm, ffn_norm
                + align(embd * embd * f16) * 4 // q, k, v (8 kv heads = 8 heads), output
                + align(embd * ff * f16) * 3; // gate, up, down
        long data = align(embd * vocab * f16) * 2 + 8 * perLayer + align(embd * f32);
        assertThat(mid.headerSize() % 32).isZero();
        assertThat(Files.size(file)).isEqualTo(mid.headerSize() + data).isEqualTo(mid.fileSize());
        assertThat(Files.size(file)).isBetween(50_000_000L, 60_000_000L);
    }

    @Test
    void bigIsAboutHalfAGigabyte() {
        assertThat(TinyGguf.big().fileSize()).isBetween(480_000_000L, 500_000_000L);
        assertThatThrownBy(() -> TinyGguf.big().seed(1).layers(40).bytes())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("write(Path)");
    }

    @Test
    void vocabularyHasTheSpecialAndBytePiecesAtFixedIds() {
        List<String> tokens = TinyGguf.tokens();
        assertThat(tokens.subList(0, 5)).containsExactly("<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>");
        assertThat(tokens.get(5)).isEqualTo("<0x00>");
        assertThat(tokens.get(15)).isEqualTo("<0x0A>");
        assertThat(tokens.get(260)).isEqualTo("<0xFF>");
        assertThat(tokens.get(261)).isEqualTo("\u2581");
        assertThat(tokens.get(262)).isEqualTo("!");
        assertThat(tokens.get(355)).isEqualTo("~");
        assertThat(tokens.get(356)).isEqualTo("\u2581a");
        assertThat(tokens.get(417)).isEqualTo("\u25819");
        assertThat(new HashSet<>(tokens)).hasSameSizeAs(tokens);
    }

    @Test
    void everyPrefixOfEveryWordIsAPiece() {
        List<String> tokens = TinyGguf.tokens();
        var pieces = new HashSet<>(tokens);
        assertThat(TinyGguf.words())
                .hasSizeBetween(100, 160)
                .contains(
                        "attack",
                        "flee",
                        "beg",
                        "trade",
                        "open_gate",
                        "check_inventory",
                        "gate_id",
                        "item",
                        "name",
                        "arguments",
                        "tool_calls",
                        "reasoning",
                        "choice",
                        "answer",
                        "emotion",
                        "line",
                        "neutral",
                        "happy",
                        "angry",
                        "sad",
                        "afraid",
                        "surprised",
                        "hello",
                        "gold",
                        "door",
                        "guard",
                        "yes",
                        "no",
                        "the",
                        "player",
                        "goblin");
        for (String word : TinyGguf.words()) {
            for (String w : List.of(word, "\u2581" + word)) {
                for (int length = 2; length <= w.length(); length++) {
                    assertThat(pieces).as("prefix of %s", w).contains(w.substring(0, length));
                }
            }
        }
        assertThat(pieces).contains("{\"", "\":", "\n", "\n\n", "é", "€", "café", "\u2581café");
    }

    @Test
    void impossibleShapesAreRefused() {
        assertThatThrownBy(() -> TinyGguf.tiny().embedding(0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("embedding must be positive, got 0");
        assertThatThrownBy(() -> TinyGguf.tiny().embedding(66).bytes())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not a multiple of heads 4");
        assertThatThrownBy(() -> TinyGguf.tiny().kvHeads(3).bytes())
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("not a multiple of kvHeads 3");
    }

    @Test
    void splitMix64MatchesTheReferenceSequence() {
        // SplitMix64 seeded with 1234567: 6457827717110365317, 3203168211198807973, 9817491932198370423 (unsigned)
        TinyGguf.SplitMix64 random = new TinyGguf.SplitMix64(1234567);
        assertThat(random.nextLong()).isEqualTo(6457827717110365317L);
        assertThat(random.nextLong()).isEqualTo(3203168211198807973L);
        assertThat(random.nextLong()).isEqualTo(-8629252141511181193L);
    }

    private static long align(long n) {
        return (n + 31) / 32 * 32;
    }

    private static int indexOf(byte[] haystack, String needle) {
        byte[] n = needle.getBytes(StandardCharsets.UTF_8);
        outer:
        for (int i = 0; i + n.length <= haystack.length; i++) {
            for (int j = 0; j < n.length; j++) {
                if (haystack[i + j] != n[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }
}
