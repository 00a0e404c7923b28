package dev.oam.core.os;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PosixTest {
    private static final boolean WINDOWS =
            System.getProperty("os.name").toLowerCase(Locale.ROOT).startsWith("windows");

    @BeforeAll
    static void onlyWhereItShouldWork() {
        // Where FFM is final and the OS is POSIX it must work; elsewhere only the "not available" test runs.
        assumeThat(Runtime.version().feature() >= 22 && !WINDOWS).isTrue();
    }

    @Test
    void isAvailableOnJdk22OrNewerOutsideWindows() {
        assertThat(Posix.isAvailable()).as(Posix.unavailableReason()).isTrue();
        assertThat(Posix.unavailableReason()).isEmpty();
    }

    @Test
    void setenvKeepsAnExistingValueUnlessToldToOverwrite() throws IOException {
        String name = "OAM_POSIX_TEST_" + ProcessHandle.current().pid();
        assertThat(Posix.getenv(name)).isEmpty();
        Posix.setenv(name, "first", false);
        Posix.setenv(name, "second", false);
        assertThat(Posix.getenv(name)).contains("first");
        Posix.setenv(name, "third ü", true);
        assertThat(Posix.getenv(name)).contains("third ü");
    }

    @SuppressWarnings("try") // the streams are opened for their descriptors, never written through
    @Test
    void dupAndDup2MoveWhereADescriptorWrites(@TempDir Path dir) throws IOException {
        assumeThat(Files.isDirectory(Path.of("/proc/self/fd"))).as("Linux").isTrue();
        Path a = dir.resolve("a");
        Path b = dir.resolve("b");
        try (FileOutputStream toA = new FileOutputStream(a.toFile());
                FileOutputStream toB = new FileOutputStream(b.toFile())) {
            int fdA = descriptorOf(a);
            int fdB = descriptorOf(b);
            int copyOfA = Posix.dup(fdA);
            assertThat(copyOfA).isNotIn(fdA, fdB);
            Posix.write(copyOfA, "to a\n".getBytes(StandardCharsets.UTF_8));
            Posix.dup2(fdB, copyOfA); // the copy now writes to b
            Posix.write(copyOfA, "to b\n".getBytes(StandardCharsets.UTF_8));
            Posix.write(copyOfA, new byte[0]);
            Posix.dup2(fdA, copyOfA); // and back to a (closing it is not part of this API)
        }
        assertThat(Files.readString(a)).isEqualTo("to a\n");
        assertThat(Files.readString(b)).isEqualTo("to b\n");
    }

    @Test
    void failuresAreIoExceptions() {
        assertThatThrownBy(() -> Posix.dup(-1)).isInstanceOf(IOException.class).hasMessageContaining("dup");
        assertThatThrownBy(() -> Posix.write(-1, new byte[] {1}))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("write");
    }

    private static int descriptorOf(Path file) throws IOException {
        Path real = file.toRealPath();
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(fd -> {
                        try {
                            return Files.readSymbolicLink(fd).equals(real);
                        } catch (IOException e) {
                            return false;
                        }
                    })
                    .mapToInt(fd -> Integer.parseInt(fd.getFileName().toString()))
                    .findFirst()
                    .orElseThrow(() -> new AssertionError("no descriptor for " + real));
        }
    }
}
