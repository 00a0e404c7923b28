package dev.oam.cli;

import dev.oam.core.os.Posix;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Arrays;
import java.util.Objects;

/**
 * Keeps the real standard output for protocol messages only, at the level of file descriptors.
 *
 * <p>{@link #install()} duplicates file descriptor 1 to a private descriptor, points descriptor 1 at standard error and
 * sets {@code System.out} to {@code System.err}; protocol messages are then written to the private descriptor with
 * {@code write(2)}. From then on everything that writes to "stdout" the ordinary way — a stray
 * {@code System.out.println}, llama.cpp or any other native code writing to fd 1, a debugger forked by native code, the
 * JVM's fatal-error banner — lands on stderr, and only the stream returned by {@link #protocolOut()} reaches the
 * process's real stdout.
 *
 * <p>It must run first, before any model backend or native library is loaded. It needs {@link Posix} (JDK 22+ on Linux
 * or macOS). Where that is missing (JDK 21, Windows) the guard falls back to what {@code oam stdio} always did: the
 * protocol goes to {@link FileDescriptor#out} and only {@code System.out} is redirected; native writes to fd 1 are then
 * not caught.
 */
final class StdoutGuard {
    private static boolean installed; // guarded by StdoutGuard.class

    private final OutputStream protocolOut;
    private final String description;
    private final boolean fdLevel;
    private final int protocolFd;

    private StdoutGuard(OutputStream protocolOut, int protocolFd, boolean fdLevel, String description) {
        this.protocolOut = protocolOut;
        this.protocolFd = protocolFd;
        this.fdLevel = fdLevel;
        this.description = description;
    }

    /**
     * Installs the guard (once per process; a second call is a programming error). Never throws for a platform that
     * cannot do it: it falls back and says why in {@link #description()}.
     */
    public static synchronized StdoutGuard install() {
        if (installed) {
            throw new IllegalStateException("the stdout guard is already installed in this process");
        }
        installed = true;
        System.out.flush();
        StdoutGuard guard;
        if (!Posix.isAvailable()) {
            guard = fallback("only System.out is redirected (" + Posix.unavailableReason() + ")");
        } else {
            guard = fdLevel();
        }
        // Anything that prints to System.out by accident must not corrupt the protocol stream.
        System.setOut(System.err);
        return guard;
    }

    private static StdoutGuard fdLevel() {
        int protocolFd;
        try {
            protocolFd = Posix.dup(1);
            Posix.dup2(2, 1);
        } catch (IOException | RuntimeException e) {
            return fallback("only System.out is redirected (" + e.getMessage() + ")");
        }
        return new StdoutGuard(
                new DescriptorOutputStream(protocolFd),
                protocolFd,
                true,
                "protocol on descriptor " + protocolFd + "; descriptor 1 now goes to stderr");
    }

    /**
     * Writes to a descriptor with {@code write(2)}. Not a FileOutputStream on /proc/self/fd/N: that would be a new open
     * file description with its own offset, so with stdout on a regular file ({@code (oam stdio; echo done) > log}) the
     * shell's later output would overwrite ours. Writing to the duplicate shares the offset (and works for sockets,
     * which /proc cannot reopen).
     */
    private static final class DescriptorOutputStream extends OutputStream {
        private final int fd;

        DescriptorOutputStream(int fd) {
            this.fd = fd;
        }

        @Override
        public void write(int b) throws IOException {
            Posix.write(fd, new byte[] {(byte) b});
        }

        @Override
        public void write(byte[] bytes, int offset, int length) throws IOException {
            Objects.checkFromIndexSize(offset, length, bytes.length);
            Posix.write(
                    fd,
                    offset == 0 && length == bytes.length ? bytes : Arrays.copyOfRange(bytes, offset, offset + length));
        }
    }

    private static StdoutGuard fallback(String why) {
        return new StdoutGuard(new FileOutputStream(FileDescriptor.out), -1, false, why);
    }

    /** The unbuffered stream to the real stdout; write protocol messages here and nowhere else. */
    public OutputStream protocolOut() {
        return protocolOut;
    }

    /** The descriptor {@link #protocolOut()} writes to unbuffered, or -1 (the fallback: not ours to ask about). */
    public int protocolFd() {
        return protocolFd;
    }

    /** Whether descriptor 1 itself now goes to stderr (false: only {@code System.out} was redirected). */
    public boolean isFdLevel() {
        return fdLevel;
    }

    /** One line for a debug log: what the guard did, or why it could only redirect System.out. */
    public String description() {
        return description;
    }
}
