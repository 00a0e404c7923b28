package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Durations;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolReply;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Runs one call of a command tool as a child process: the arguments as JSON on stdin and in
 * {@code $OAM_TOOL_ARGUMENTS}, {@code $OAM_TOOL_NAME} and {@code $OAM_TOOL_CALL_ID} in the environment; stdout is the
 * output (a JSON object or array passes through as JSON), cut at {@code maxOutputChars}; a non-zero exit is an error
 * output with stderr. On timeout or cancellation the process and its descendants get SIGTERM, then SIGKILL after
 * {@link #KILL_GRACE_MS}.
 */
final class CommandRunner {
    static final long KILL_GRACE_MS = 2000;
    private static final long READ_TAIL_MS = 2000;

    private final CliTools.Command command;
    private final ToolCall call;
    private final AtomicBoolean abandoned = new AtomicBoolean();
    private volatile Process process;

    CommandRunner(CliTools.Command command, ToolCall call) {
        this.command = command;
        this.call = call;
    }

    /** Stops the process (the turn no longer needs the output). */
    void abandon() {
        abandoned.set(true);
        Process p = process;
        if (p != null) {
            kill(p);
        }
    }

    ToolReply run() {
        String arguments = Json.write(call.arguments());
        ProcessBuilder builder =
                new ProcessBuilder(command.argv()).directory(command.cwd().toFile());
        builder.environment().putAll(command.env());
        builder.environment().put("OAM_TOOL_ARGUMENTS", arguments);
        builder.environment().put("OAM_TOOL_NAME", call.name());
        builder.environment().put("OAM_TOOL_CALL_ID", call.id());
        Process p;
        try {
            p = builder.start();
        } catch (IOException e) {
            return ToolReply.error("Tool '" + call.name() + "' could not be started: " + e.getMessage());
        }
        process = p;
        if (abandoned.get()) {
            kill(p);
        }
        int cap = command.maxOutputChars() * 4 + 16; // bytes kept: enough for maxOutputChars characters of UTF-8
        Capture out = new Capture(p.getInputStream(), cap);
        Capture err = new Capture(p.getErrorStream(), 16 * 1024);
        Thread.ofVirtual().start(() -> {
            try (OutputStream in = p.getOutputStream()) {
                in.write(arguments.getBytes(StandardCharsets.UTF_8));
            } catch (IOException e) {
                // the tool does not read its stdin: fine
            }
        });
        boolean finished;
        try {
            finished = p.waitFor(command.timeout().toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            kill(p);
            Thread.currentThread().interrupt();
            return ToolReply.error("Tool '" + call.name() + "' was cancelled.");
        }
        if (!finished) {
            kill(p);
            out.await();
            return ToolReply.error("Tool '" + call.name() + "' timed out after " + Durations.seconds(command.timeout())
                    + "s and was stopped.");
        }
        out.await();
        err.await();
        if (abandoned.get()) {
            return ToolReply.error("Tool '" + call.name() + "' was cancelled.");
        }
        String stdout = out.text();
        boolean truncated = stdout.length() > command.maxOutputChars() || out.overflowed();
        if (truncated) {
            stdout = stdout.substring(0, Math.min(stdout.length(), command.maxOutputChars()))
                    + "\n[output truncated to " + command.maxOutputChars() + " characters]";
        }
        if (p.exitValue() != 0) {
            String stderr = err.text().strip();
            String message = "Tool '" + call.name() + "' exited with status " + p.exitValue()
                    + (stderr.isEmpty() ? "" : ": " + stderr)
                    + (stdout.isBlank() ? "" : "\nOutput: " + stdout.strip());
            return ToolReply.error(message);
        }
        String trimmed = stdout.strip();
        if (!truncated && (trimmed.startsWith("{") || trimmed.startsWith("["))) {
            try {
                JsonNode json = Json.parse(trimmed);
                if (json.isContainerNode()) {
                    return ToolReply.output(json);
                }
            } catch (IOException e) {
                // not JSON after all: the text is the output
            }
        }
        return ToolReply.output(
                TextNode.valueOf(stdout.endsWith("\n") ? stdout.substring(0, stdout.length() - 1) : stdout));
    }

    /** SIGTERM to the process and its descendants, SIGKILL to whatever is left after the grace period. */
    static void kill(Process p) {
        var tree = new java.util.ArrayList<ProcessHandle>();
        p.descendants().forEach(tree::add);
        tree.add(p.toHandle());
        tree.forEach(ProcessHandle::destroy);
        Thread.ofVirtual().start(() -> {
            long deadline = System.nanoTime() + KILL_GRACE_MS * 1_000_000L;
            for (ProcessHandle handle : tree) {
                long left = deadline - System.nanoTime();
                try {
                    if (left > 0) {
                        handle.onExit().get(left, TimeUnit.NANOSECONDS);
                    }
                } catch (Exception e) {
                    // still running: killed below
                }
                if (handle.isAlive()) {
                    handle.destroyForcibly();
                }
            }
        });
        try {
            p.onExit().get(KILL_GRACE_MS + 1000, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            // reported as a timeout all the same
        }
    }

    /** Reads a stream to its end on a virtual thread, keeping the first {@code cap} bytes. */
    private static final class Capture {
        private final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        private final Thread thread;
        private volatile boolean overflowed;

        Capture(InputStream in, int cap) {
            thread = Thread.ofVirtual().start(() -> {
                byte[] buffer = new byte[8192];
                try (in) {
                    int n;
                    while ((n = in.read(buffer)) >= 0) {
                        synchronized (bytes) {
                            int keep = Math.max(0, Math.min(n, cap - bytes.size()));
                            bytes.write(buffer, 0, keep);
                            if (keep < n) {
                                overflowed = true;
                            }
                        }
                    }
                } catch (IOException e) {
                    // the process went away
                }
            });
        }

        /** Waits for the end of the stream (bounded: a daemon grandchild may keep it open). */
        void await() {
            try {
                thread.join(java.time.Duration.ofMillis(READ_TAIL_MS));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        boolean overflowed() {
            return overflowed;
        }

        String text() {
            synchronized (bytes) {
                return bytes.toString(StandardCharsets.UTF_8);
            }
        }
    }
}
