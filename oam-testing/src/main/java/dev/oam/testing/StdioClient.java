package dev.oam.testing;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** A client talking to a real {@code oam stdio} child process. Its stderr is kept for diagnostics. */
public final class StdioClient implements ProtocolClient {
    private final Process process;
    private final OutputStream stdin;
    private final Inbox inbox = new Inbox();
    private final StreamCapture stderr;
    private final Object writeLock = new Object();
    private final Thread stdoutReader;

    private StdioClient(Process process) {
        this.process = process;
        this.stdin = process.getOutputStream();
        this.stdoutReader =
                Thread.ofPlatform().daemon().name("stdio-client-out").start(this::readStdout);
        this.stderr = StreamCapture.start(process.getErrorStream(), "stdio-client-err");
    }

    /** Starts {@code command} (e.g. {@code bin/oam stdio --tool-timeout 5}). */
    public static StdioClient start(List<String> command) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.redirectInput(ProcessBuilder.Redirect.PIPE);
        return new StdioClient(builder.start());
    }

    private void readStdout() {
        try (BufferedReader reader =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                inbox.accept(line);
            }
        } catch (IOException e) {
            // process ended
        }
    }

    public String stderr() {
        return stderr.text();
    }

    @Override
    public void send(byte[] line) {
        synchronized (writeLock) {
            try {
                stdin.write(line);
                stdin.write('\n');
                stdin.flush();
            } catch (IOException e) {
                throw new IllegalStateException("the bridge process closed its input; stderr:\n" + stderr(), e);
            }
        }
    }

    @Override
    public JsonNode poll(Duration timeout) throws InterruptedException {
        return inbox.poll(timeout);
    }

    @Override
    public List<String> garbage() {
        return inbox.garbage();
    }

    @Override
    public void endInput() {
        synchronized (writeLock) {
            try {
                stdin.close();
            } catch (IOException e) {
                // already closed
            }
        }
    }

    @Override
    public boolean awaitStopped(Duration timeout) throws InterruptedException {
        boolean stopped = process.waitFor(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (stopped) {
            stderr.join(); // the process is gone, so its stderr ends: keep all of it for the caller's checks
            stdoutReader.join(); // and every line it wrote is in the inbox (or garbage)
        }
        return stopped;
    }

    /** The process id of the child (the JVM itself when the command execs into it, as {@code bin/oam} does). */
    public long pid() {
        return process.pid();
    }

    @Override
    public int exitCode() {
        return process.exitValue();
    }

    @Override
    public void close() {
        endInput();
        try {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
        }
    }
}
