package dev.oam.cli;

import dev.oam.core.os.Posix;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import picocli.CommandLine;

/**
 * The child process of {@link StdoutGuardIT}: {@code oam stdio} exactly as {@code Main} runs it
 * ({@link StdioCommand#run}, which installs the {@link StdoutGuard} first), except that its input passes through
 * {@link Triggers}: a line {@code #stray KIND} is not handed to the bridge but makes this process write to "stdout" the
 * way stray code would. Lines are acted on in arrival order, so every request sent before a trigger has been read (and
 * its answer can be awaited) first.
 *
 * <p>With the argument {@code --unguarded} it serves the way {@code oam stdio} did before the guard (only
 * {@code System.out} redirected), to show that the test sees what the guard prevents.
 */
final class StrayWriterMain {
    private StrayWriterMain() {}

    public static void main(String[] args) throws Exception {
        boolean unguarded = Arrays.asList(args).contains("--unguarded");
        StdioCommand command = new StdioCommand();
        new CommandLine(command).parseArgs(); // the options' defaults
        InputStream in = new Triggers(System.in);
        int code;
        if (unguarded) {
            FileOutputStream stdout = new FileOutputStream(FileDescriptor.out);
            System.setOut(System.err);
            code = command.serve(in, new BufferedOutputStream(stdout, 64 * 1024), "");
        } else {
            code = command.run(in);
        }
        System.exit(code);
    }

    /** Hands lines through, and acts on {@code #stray} lines instead of passing them on. */
    private static final class Triggers extends InputStream {
        private final InputStream in;
        private byte[] line = new byte[0];
        private int position;

        Triggers(InputStream in) {
            this.in = in;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            while (position == line.length) {
                byte[] next = nextLine();
                if (next == null) {
                    return -1;
                }
                String text = new String(next, StandardCharsets.UTF_8);
                if (text.startsWith("#stray ")) {
                    stray(text.substring("#stray ".length()).trim());
                } else {
                    line = next;
                    position = 0;
                }
            }
            int n = Math.min(length, line.length - position);
            System.arraycopy(line, position, buffer, offset, n);
            position += n;
            return n;
        }

        /** The next line including its newline, or null at end of input. */
        private byte[] nextLine() throws IOException {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream();
            int b;
            while ((b = in.read()) >= 0) {
                bytes.write(b);
                if (b == '\n') {
                    break;
                }
            }
            return bytes.size() == 0 ? null : bytes.toByteArray();
        }
    }

    private static void stray(String kind) throws IOException {
        switch (kind) {
            case "java" -> {
                System.out.println("STRAY-JAVA from System.out");
                System.out.flush();
            }
            case "native" -> Posix.write(1, "STRAY-NATIVE from write(1)\n".getBytes(StandardCharsets.UTF_8));
            case "env" ->
                System.err.println(
                        "GGML_NO_BACKTRACE=" + Posix.getenv("GGML_NO_BACKTRACE").orElse("<unset>"));
            case "crash" -> crash();
            default -> throw new IllegalArgumentException("unknown stray kind " + kind);
        }
    }

    /** A hard JVM crash (SIGSEGV on address 0): the fatal-error banner and an hs_err report follow. */
    private static void crash() {
        try {
            Field field = Class.forName("sun.misc.Unsafe").getDeclaredField("theUnsafe");
            field.setAccessible(true);
            Object unsafe = field.get(null);
            unsafe.getClass().getMethod("putAddress", long.class, long.class).invoke(unsafe, 0L, 0L);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("could not crash", e);
        }
        throw new IllegalStateException("still alive after writing to address 0");
    }
}
