package dev.oam.cli;

import dev.oam.core.Environment;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** What the standard streams are connected to, and whether colour is wanted ({@code NO_COLOR}). */
final class Tty {
    private Tty() {}

    /** Whether file descriptor {@code fd} (0, 1, 2) is a terminal. Linux and macOS; {@code false} when unknown. */
    static boolean isTerminal(int fd) {
        for (String dir : new String[] {"/proc/self/fd/", "/dev/fd/"}) {
            try {
                Path target = Files.readSymbolicLink(Path.of(dir + fd));
                String name = target.toString();
                return name.startsWith("/dev/pts/") || name.startsWith("/dev/tty") || name.equals("/dev/console");
            } catch (IOException | UnsupportedOperationException e) {
                // try the next place
            }
        }
        return viaJLine(fd);
    }

    /** Where descriptors are not links to their device (macOS's /dev/fd): ask JLine's native or exec provider. */
    private static boolean viaJLine(int fd) {
        org.jline.terminal.spi.SystemStream stream = switch (fd) {
            case 0 -> org.jline.terminal.spi.SystemStream.Input;
            case 1 -> org.jline.terminal.spi.SystemStream.Output;
            default -> org.jline.terminal.spi.SystemStream.Error;
        };
        for (String provider : new String[] {"ffm", "exec"}) {
            try {
                return org.jline.terminal.spi.TerminalProvider.load(provider).isSystemStream(stream);
            } catch (IOException | RuntimeException | LinkageError e) {
                // the next provider
            }
        }
        return false;
    }

    /** Colour on stderr: a terminal and no {@code NO_COLOR} (any non-empty value turns colour off). */
    static boolean colorOnStderr() {
        return colorAllowed(Main.process()) && isTerminal(2);
    }

    /** Whether {@code environment} allows colour: no {@code NO_COLOR} and a terminal that is not {@code dumb}. */
    static boolean colorAllowed(Environment environment) {
        return !noColor(environment) && !"dumb".equals(environment.variable("TERM"));
    }

    /** Whether {@code NO_COLOR} is set to a non-empty value (no-color.org). */
    static boolean noColor(Environment environment) {
        String noColor = environment.variable("NO_COLOR");
        return noColor != null && !noColor.isEmpty();
    }

    static String dim(String text, boolean color) {
        return color ? "\u001b[2m" + text + "\u001b[0m" : text;
    }

    static String red(String text, boolean color) {
        return color ? "\u001b[31m" + text + "\u001b[0m" : text;
    }

    /**
     * A spinner on stderr for long waits (loading a model, a slow first token): drawn only when stderr is a terminal,
     * erased by {@link #stop()}. Nothing at all reaches a stderr that is not a terminal.
     */
    static final class Spinner implements AutoCloseable {
        private static final String FRAMES = "|/-\\";
        private final PrintStream err;
        private final String label;
        private final Object lock = new Object();
        private boolean stopped; // guarded by lock
        private boolean drawn; // guarded by lock
        private final Thread thread;

        private Spinner(PrintStream err, String label) {
            this.err = err;
            this.label = label;
            this.thread = Thread.ofPlatform().daemon().name("oam-spinner").unstarted(this::spin);
        }

        /** Starts a spinner when stderr is a terminal; otherwise one that draws nothing. */
        static Spinner start(String label) {
            Spinner spinner = new Spinner(System.err, label);
            if (isTerminal(2)) {
                spinner.thread.start();
            } else {
                spinner.stopped = true;
            }
            return spinner;
        }

        private void spin() {
            long startedAt = System.nanoTime();
            int frame = 0;
            synchronized (lock) {
                while (!stopped) {
                    try {
                        lock.wait(120);
                    } catch (InterruptedException e) {
                        return;
                    }
                    if (stopped) {
                        break;
                    }
                    if (System.nanoTime() - startedAt > 300_000_000L) { // short waits draw nothing
                        err.print("\r" + FRAMES.charAt(frame++ % FRAMES.length()) + " " + label + "\u001b[K");
                        err.flush();
                        drawn = true;
                    }
                }
            }
        }

        /** Erases the spinner; safe to call more than once and from any thread. */
        void stop() {
            synchronized (lock) {
                if (stopped) {
                    return;
                }
                stopped = true;
                lock.notifyAll();
                if (drawn) {
                    err.print("\r\u001b[K");
                    err.flush();
                }
            }
        }

        @Override
        public void close() {
            stop();
        }
    }
}
