package dev.oam.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The GGUF header parser, which runs in Java so that a bad model file is refused before llama.cpp sees it. Properties:
 * it only ever throws {@link GgufException}; what it accepts is consistent (every tensor lies inside the file, after
 * the header, with a positive size; the vocabulary is not empty), so native code is never handed a file whose header
 * lies about its extent; and reading one header allocates at most {@link #ALLOCATION_BOUND} bytes plus a small multiple
 * of the file size, whatever counts the file claims (measured on a second read of the same file, so that class loading
 * and Jazzer's instrumentation on the first are not counted).
 */
class GgufHeaderFuzzTest {
    /** Fixed allocation allowance per read (buffers, the metadata map, messages), besides {@code 16 × file size}. */
    static final long ALLOCATION_BOUND = 4L << 20;

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static Path file;

    /**
     * Loads and initializes the parser's classes (and those of its error paths) before anything is measured: the first
     * read of a JVM allocates megabytes for class loading, which is not the parser's doing.
     */
    @BeforeAll
    static void warmUp() throws IOException {
        Path path = file();
        for (byte[] sample : new byte[][] {
            {},
            "GGUF".getBytes(StandardCharsets.US_ASCII),
            "GGUF\3\0\0\0xxxxxxxx".getBytes(StandardCharsets.US_ASCII),
            "not a model".getBytes(StandardCharsets.US_ASCII)
        }) {
            Files.write(path, sample);
            try {
                GgufFile.read(path);
            } catch (GgufException expected) {
                // warming up the error path
            }
        }
        TinyGguf.tiny().write(path);
        try {
            GgufFile.read(path);
        } catch (GgufException e) {
            throw new AssertionError("the tiny test model is refused: " + e.getMessage(), e);
        }
    }

    @FuzzTest(maxDuration = "10m")
    void header(byte[] data) throws IOException {
        Path path = file();
        Files.write(path, data);
        GgufFile gguf = read(path); // the first read may load and instrument classes on this thread
        long before = THREADS.getCurrentThreadAllocatedBytes();
        read(path);
        checkAllocation(before, data.length);
        if (gguf == null) {
            return;
        }
        assertThat(gguf.fileSize()).isEqualTo(data.length);
        assertThat(gguf.version()).isIn(2, 3);
        assertThat(gguf.architecture()).isNotNull();
        assertThat(gguf.contextLength()).isPositive();
        assertThat(gguf.tokens()).isNotEmpty();
        assertThat(gguf.dataOffset()).isBetween(24L, (long) data.length + 1024 * 1024);
        for (GgufFile.Tensor tensor : gguf.tensors()) {
            assertThat(tensor.size()).as("size of %s", tensor.name()).isPositive();
            assertThat(tensor.offset()).as("offset of %s", tensor.name()).isNotNegative();
            assertThat(gguf.dataOffset() + tensor.offset() + tensor.size())
                    .as("end of %s", tensor.name())
                    .isLessThanOrEqualTo(data.length);
        }
    }

    private static @Nullable GgufFile read(Path path) {
        try {
            return GgufFile.read(path);
        } catch (GgufException refused) {
            assertThat(refused.getMessage()).isNotBlank();
            return null;
        }
    }

    private static void checkAllocation(long before, int size) {
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        assertThat(allocated)
                .as("bytes allocated reading a %d-byte header", size)
                .isLessThanOrEqualTo(ALLOCATION_BOUND + 16L * size);
    }

    private static synchronized Path file() {
        if (file == null) {
            try {
                Path shm = Path.of("/dev/shm");
                file = Files.isDirectory(shm) && Files.isWritable(shm)
                        ? Files.createTempFile(shm, "oam-fuzz-", ".gguf")
                        : Files.createTempFile("oam-fuzz-", ".gguf");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return file;
    }

    @AfterAll
    static void cleanUp() throws IOException {
        if (file != null) {
            Files.deleteIfExists(file);
        }
    }
}
