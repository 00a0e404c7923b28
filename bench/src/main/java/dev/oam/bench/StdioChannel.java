package dev.oam.bench;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * A child process spoken to over its stdin/stdout, one JSON object per line. A reader thread splits stdout into lines
 * and hands each to the current {@link LineHandler} with its arrival time. The child's stderr goes to a log file whose
 * tail is shown when something fails.
 */
final class StdioChannel extends Channel {
    private static final int MAX_LINE = 16 * 1024 * 1024;

    private final Process process;
    private final OutputStream out;
    private final Thread reader;
    private final Path log;
    private volatile long reads;

    StdioChannel(String name, List<String> command, Path log) throws IOException {
        this(name, command, log, java.util.Map.of());
    }

    /** As above, with {@code environment} added to (or replacing values of) the harness's own environment. */
    StdioChannel(String name, List<String> command, Path log, java.util.Map<String, String> environment)
            throws IOException {
        super(name);
        this.log = log;
        Files.createDirectories(log.getParent());
        Files.deleteIfExists(log);
        ProcessBuilder builder =
                new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        builder.environment().putAll(environment);
        this.process = builder.start();
        Children.register(process);
        this.out = new BufferedOutputStream(process.getOutputStream(), 64 * 1024);
        this.reader = Thread.ofPlatform().daemon().name(name + "-reader").start(this::readLoop);
    }

    long pid() {
        return process.pid();
    }

    @Override
    synchronized void send(String line) {
        try {
            out.write(line.getBytes(StandardCharsets.UTF_8));
            out.write('\n');
        } catch (IOException e) {
            fail("writing to the child failed: " + e);
            throw new UncheckedIOException(e);
        }
    }

    @Override
    synchronized void flush() {
        try {
            out.flush();
        } catch (IOException e) {
            fail("flushing to the child failed: " + e);
            throw new UncheckedIOException(e);
        }
    }

    private void readLoop() {
        byte[] buffer = new byte[64 * 1024];
        int start = 0;
        int end = 0;
        try (InputStream in = process.getInputStream()) {
            while (true) {
                if (end == buffer.length) {
                    if (start > 0) {
                        System.arraycopy(buffer, start, buffer, 0, end - start);
                        end -= start;
                        start = 0;
                    } else if (buffer.length < MAX_LINE) {
                        buffer = Arrays.copyOf(buffer, buffer.length * 2);
                    } else {
                        fail("the child wrote a line longer than " + MAX_LINE + " bytes");
                        return;
                    }
                }
                int read = in.read(buffer, end, buffer.length - end);
                if (read < 0) {
                    fail("the child closed its output (exit code " + exitCode() + ")");
                    return;
                }
                long now = System.nanoTime();
                reads++;
                int scan = end;
                end += read;
                LineHandler current = handler();
                for (int i = scan; i < end; i++) {
                    if (buffer[i] == '\n') {
                        try {
                            current.onLine(buffer, start, i - start, now);
                        } catch (RuntimeException e) {
                            fail("the line handler failed: " + e);
                        }
                        start = i + 1;
                    }
                }
                if (start == end) {
                    start = 0;
                    end = 0;
                }
            }
        } catch (IOException e) {
            fail("reading from the child failed: " + e);
        }
    }

    @Override
    Meter.Reading reading() {
        long cpu = process.toHandle()
                .info()
                .totalCpuDuration()
                .map(java.time.Duration::toNanos)
                .orElse(-1L);
        return new Meter.Reading(
                cpu, Meter.contextSwitches(process.pid()), reads, System.nanoTime(), Meter.runQueueWait(process.pid()));
    }

    private String exitCode() {
        try {
            return process.waitFor(500, java.util.concurrent.TimeUnit.MILLISECONDS)
                    ? String.valueOf(process.exitValue())
                    : "still running";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown";
        }
    }

    @Override
    String diagnostics() {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            List<String> tail = lines.subList(Math.max(0, lines.size() - 15), lines.size());
            return tail.isEmpty()
                    ? ""
                    : "; stderr of " + name() + " (" + log + "):\n    " + String.join("\n    ", tail);
        } catch (IOException e) {
            return "";
        }
    }

    /** Closes stdin (the child exits at end of input), then makes sure the process is gone. */
    @Override
    public void close() {
        try {
            synchronized (this) {
                out.close();
            }
        } catch (IOException e) {
            // the child may already be gone
        }
        Children.stop(process, 5_000);
        try {
            reader.join(2_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
