package dev.oam.cli;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.MemoryLimits;
import dev.oam.core.Environment;
import dev.oam.core.Log;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ModelBackends;
import dev.oam.core.model.ModelSpec;
import dev.oam.core.os.NativeAbort;
import dev.oam.core.os.Posix;
import java.io.InputStream;
import java.io.OutputStream;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/** {@code oam stdio}: the bridge over standard input and output. */
@Command(
        name = "stdio",
        mixinStandardHelpOptions = true,
        description = {
            "Serve the bridge protocol over stdin/stdout: one JSON-RPC 2.0 message per line.",
            "Standard output carries protocol messages only; logs go to standard error."
        })
final class StdioCommand implements Callable<Integer> {
    /**
     * After the {@code shutdown} response: the server reads and refuses (-32023) what the client has already written,
     * and exits once its input has been quiet this long, or at the latest after {@link #SHUTDOWN_LINGER}. A game that
     * quits waits for the process, and the original exits once the response is delivered.
     */
    static final Duration SHUTDOWN_QUIET = Duration.ofMillis(50);
    /** The longest the server stays after delivering the {@code shutdown} response, stdin open or not. */
    static final Duration SHUTDOWN_LINGER = Duration.ofMillis(300);

    @Option(
            names = "--log-level",
            defaultValue = "warning",
            paramLabel = "LEVEL",
            description = "debug, info, warning (default), error or off.")
    String logLevel;

    @Option(
            names = "--max-sessions",
            defaultValue = "64",
            paramLabel = "N",
            description = "Session limit (default 64).")
    int maxSessions;

    @Option(
            names = "--tool-timeout",
            defaultValue = "120",
            paramLabel = "SECONDS",
            description =
                    "Default time the engine has to answer a tool/call (default 120; 0 = forever; at most 86400).")
    double toolTimeout;

    @Option(names = "--no-scripted-models", description = "Refuse scripted models.")
    boolean noScriptedModels;

    @Option(names = "--model", paramLabel = "PATH.gguf|URL", description = "The system model (also OAM_MODEL).")
    String model;

    @Option(
            names = "--model-name",
            paramLabel = "NAME",
            description = "The model name on an OpenAI-compatible server (also OAM_MODEL_NAME).")
    String modelName;

    @Option(
            names = "--max-history-size",
            defaultValue = "16M",
            paramLabel = "SIZE",
            description = "Cap for one session's or NPC's history, in characters of its transcript JSON (default "
                    + "16M; K, M, G suffixes).")
    String maxHistorySize;

    @Option(
            names = "--max-total-history-size",
            defaultValue = "256M",
            paramLabel = "SIZE",
            description = "Cap for all histories together (default 256M).")
    String maxTotalHistorySize;

    @Option(
            names = "--max-world-size",
            defaultValue = "16M",
            paramLabel = "SIZE",
            description = "Cap for one world's state, in characters of its JSON (default 16M).")
    String maxWorldSize;

    @Option(
            names = "--max-total-world-size",
            defaultValue = "64M",
            paramLabel = "SIZE",
            description = "Cap for all worlds together (default 64M).")
    String maxTotalWorldSize;

    @Override
    public Integer call() throws Exception {
        return run(System.in);
    }

    /** What {@code oam stdio} does with its standard input (tests hand in a scripted one). */
    int run(InputStream in) throws Exception {
        return run(in, false);
    }

    /**
     * {@link #run(InputStream)}, or with {@code discard} the same start-up with the protocol's answers thrown away: the
     * AOT cache's training run ({@link AotTraining}) goes through every step a real start takes.
     */
    int run(InputStream in, boolean discard) throws Exception {
        // First of all, before any backend or native library is loaded (see StdoutGuard).
        StdoutGuard guard = StdoutGuard.install();
        noNativeBacktraces();
        // A native abort (llama.cpp) then says so on stderr and leaves the JVM's crash report (docs/RELIABILITY.md).
        String abort = NativeAbort.install("oam stdio");
        String description = guard.description() + "; " + abort;
        return discard
                ? serve(in, OutputStream.nullOutputStream(), -1, description)
                : serve(in, guard.protocolOut(), guard.protocolFd(), description);
    }

    /**
     * ggml forks gdb on an assert and prints its backtrace on stdout unless GGML_NO_BACKTRACE is set. bin/oam exports
     * it; this covers {@code java -jar oam.jar stdio}. A value the user set is kept. Runs before any other thread of
     * ours exists (setenv is not thread-safe in C).
     */
    static void noNativeBacktraces() {
        if (Posix.isAvailable()) {
            try {
                Posix.setenv("GGML_NO_BACKTRACE", "1", false);
            } catch (java.io.IOException e) {
                Log.warning("cannot set GGML_NO_BACKTRACE: " + e.getMessage());
            }
        }
    }

    /**
     * A host variable: {@code --model} and {@code --model-name} stand for {@code OAM_MODEL} and {@code OAM_MODEL_NAME}.
     */
    private Environment environment() {
        return ModelSource.flags(model, modelName).over(Main.process());
    }

    /** A size such as {@code 4096}, {@code 512K}, {@code 16M} or {@code 1G} (binary multiples), at least 16. */
    static long size(String text, String option) {
        String t = text.strip().toUpperCase(java.util.Locale.ROOT);
        long unit = 1;
        if (t.endsWith("K") || t.endsWith("M") || t.endsWith("G")) {
            unit = switch (t.charAt(t.length() - 1)) {
                case 'K' -> 1L << 10;
                case 'M' -> 1L << 20;
                default -> 1L << 30;
            };
            t = t.substring(0, t.length() - 1);
        }
        long value;
        try {
            value = Long.parseLong(t);
        } catch (NumberFormatException e) {
            value = -1;
        }
        if (value < 0 || value > (1L << 40) / unit || value * unit < 16) {
            throw new IllegalArgumentException(
                    option + " must be a size of at least 16 such as 4096, 512K, 16M or 1G, not '" + text + "'");
        }
        return value * unit;
    }

    int serve(InputStream in, OutputStream out, String guardDescription) throws Exception {
        return serve(in, out, -1, guardDescription);
    }

    /** {@code outFd}: the descriptor {@code out} writes to unbuffered (behind its one buffer), or -1 if unknown. */
    int serve(InputStream in, OutputStream out, int outFd, String guardDescription) throws Exception {
        try {
            Log.setLevel(Log.parseLevel(logLevel));
        } catch (IllegalArgumentException e) {
            System.err.println("oam stdio: " + e.getMessage());
            return 2;
        }
        if (!guardDescription.isEmpty()) {
            Log.debug("stdout guard: " + guardDescription);
        }
        if (maxSessions < 1) {
            System.err.println("oam stdio: --max-sessions must be at least 1");
            return 2;
        }
        if (!(toolTimeout >= 0 && toolTimeout <= 86_400)) {
            System.err.println(
                    "oam stdio: --tool-timeout must be a number of seconds from 0 to 86400 (0 means no limit)");
            return 2;
        }
        MemoryLimits limits;
        try {
            limits = new MemoryLimits(
                    size(maxHistorySize, "--max-history-size"),
                    size(maxTotalHistorySize, "--max-total-history-size"),
                    size(maxWorldSize, "--max-world-size"),
                    size(maxTotalWorldSize, "--max-total-world-size"));
        } catch (IllegalArgumentException e) {
            System.err.println("oam stdio: " + e.getMessage());
            return 2;
        }
        // The engine owns these backends once it is made (it closes them when it closes); until then, this command.
        List<ModelBackend> backends = ModelBackend.discover();
        CountDownLatch done = new CountDownLatch(1); // end of input handled, or shutdown delivered
        BridgeConfiguration configuration;
        try {
            configuration = BridgeConfiguration.builder()
                    .maxSessions(maxSessions)
                    .defaultToolTimeout(Duration.ofNanos((long) (toolTimeout * 1e9)))
                    .allowsScriptedModels(!noScriptedModels)
                    .backends(backends)
                    .systemModel(ModelSpec.fromEnvironment(environment()))
                    .onShutdown(done::countDown)
                    .memoryLimits(limits)
                    .build();
        } catch (ModelBackends.ModelSetupException e) {
            System.err.println("oam stdio: " + e.getMessage());
            backends.forEach(ModelBackend::close);
            return 2;
        }
        CountDownLatch inputEnded = new CountDownLatch(1);
        StdioTransport.Sink sink = StdioTransport.sink(out, outFd, DebugCounters.fromProperty(Main.process()));
        BridgeEngine engine = BridgeEngine.withSink(configuration, sink);
        StdioTransport.Activity input = new StdioTransport.Activity(in);
        Thread reader = Thread.ofPlatform().daemon().name("oam-stdin").start(() -> {
            try {
                StdioTransport.pump(input, engine, sink.input());
                Log.debug("end of input; waiting for outstanding requests");
                engine.awaitIdle(Duration.ofDays(365));
            } catch (Exception e) {
                Log.warning("reading standard input failed: " + e);
            } finally {
                inputEnded.countDown();
                done.countDown();
            }
        });
        done.await();
        if (inputEnded.getCount() > 0) {
            // Shut down by request. Lines the client had written are still read and refused with -32023 (the engine
            // refuses every request now), so none already sent is dropped unanswered; then the server exits without
            // waiting for end of input.
            Log.debug("shut down; refusing what is already written, then exiting");
            long deadline = System.nanoTime() + SHUTDOWN_LINGER.toNanos();
            while (true) {
                long quiet = input.quietLeft(SHUTDOWN_QUIET);
                long left = deadline - System.nanoTime();
                if (quiet <= 0
                        || left <= 0
                        || inputEnded.await(Math.max(1, Math.min(quiet, left)), TimeUnit.NANOSECONDS)) {
                    break;
                }
            }
        }
        engine.close(); // and with it the backends
        out.flush();
        Log.debug("stdio server stopped" + (reader.isAlive() ? " (after shutdown)" : ""));
        return 0;
    }
}
