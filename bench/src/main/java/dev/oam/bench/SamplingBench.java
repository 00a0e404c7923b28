package dev.oam.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.testing.LlamaServer;
import dev.oam.testing.RealModel;
import dev.oam.testing.RealModels;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench/run sampling}: generation speed of the embedded engine at the default sampling and greedy, next to
 * llama-server from the same llama.cpp tree with the same threads, one session and several at once, on both real
 * models, in one run (issue 38, point 5).
 *
 * <p>Ours: a child {@code java -jar oam.jar stdio --model FILE} with {@code OAM_LLAMA_THREADS},
 * {@code OAM_LLAMA_THREADS_BATCH} and {@code OAM_LLAMA_SLOTS} set; sessions with {@code maxResponseTokens} N and the
 * default sampling (temperature 0.7, top-k 40, top-p 0.95) or temperature 0. Theirs: {@code llama-server -np SLOTS -t
 * THREADS -tb BATCH} on the same file, {@code /v1/chat/completions} with the same messages, {@code max_tokens} and
 * sampling. Each measurement: every session answers one warm-up turn, then R turns (one session: one after the other;
 * several: all at once, R rounds), tokens per second being the output tokens over the wall time. Ours and theirs
 * alternate per model and round.
 */
public final class SamplingBench {
    private static final String INSTRUCTIONS = "You are Gorm, the village blacksmith. Answer in a few sentences.";
    private static final List<String> PROMPTS = List.of(
            "Tell me about the swords you make.",
            "What news have you heard in town?",
            "How did you learn your trade?",
            "Describe your forge to a traveller.",
            "What do you think of the king?",
            "Which metal is best for a shield?",
            "Tell me a story about your father.",
            "What would you charge to mend a helmet?");

    private record Config(
            Path root, List<String> models, int tokens, int sessions, int rounds, int threads, int threadsBatch) {}

    private record Result(String engine, String model, String sampling, int sessions, double tokensPerSecond) {}

    private final Config config;
    private final List<Result> results = new ArrayList<>();
    private StdioChannel child;
    private final BlockingQueue<JsonNode> inbox = new LinkedBlockingQueue<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private int ids;

    private SamplingBench(Config config) {
        this.config = config;
    }

    public static void main(String[] args) {
        Path root = Path.of(System.getProperty("oam.bench.root", "."))
                .toAbsolutePath()
                .normalize();
        List<String> models = List.of("smollm2", "gemma");
        int tokens = 48;
        int sessions = 8;
        int rounds = 2;
        int threads = 1;
        int threadsBatch = 2;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--models" -> models = List.of(args[++i].split(","));
                case "--tokens" -> tokens = Integer.parseInt(args[++i]);
                case "--sessions" -> sessions = Integer.parseInt(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--threads-batch" -> threadsBatch = Integer.parseInt(args[++i]);
                case "--help" -> {
                    System.out.println("""
                            usage: bench/run sampling [--models smollm2,gemma] [--tokens 48] [--sessions 8] [--rounds 2] \
                            [--threads 1] [--threads-batch 2]
                              ours: oam stdio (this build's oam.jar) with OAM_LLAMA_THREADS/_THREADS_BATCH/_SLOTS; theirs:
                              llama-server -np SESSIONS -t THREADS -tb THREADS_BATCH (OAM_TEST_LLAMA_SERVER); default
                              sampling (temperature 0.7, top-k 40, top-p 0.95) and greedy, one session and SESSIONS at once.""");
                    return;
                }
                default -> {
                    System.err.println("bench sampling: unknown option " + args[i] + " (--help)");
                    System.exit(2);
                }
            }
        }
        int code = 1;
        try {
            new SamplingBench(new Config(root, models, tokens, sessions, rounds, threads, threadsBatch)).run();
            code = 0;
        } catch (Exception e) {
            System.err.println("bench sampling: " + e);
            e.printStackTrace(System.err);
        } finally {
            Children.destroyAll();
        }
        System.exit(code);
    }

    private void run() throws Exception {
        String before = load();
        long started = System.nanoTime();
        Files.createDirectories(config.root().resolve("bench/target/logs"));
        for (int m = 0; m < config.models().size(); m++) {
            String model = config.models().get(m);
            for (int round = 0; round < config.rounds(); round++) {
                boolean oursFirst = (m + round) % 2 == 0;
                for (int k = 0; k < 2; k++) {
                    if ((k == 0) == oursFirst) {
                        ours(model);
                    } else {
                        theirs(model);
                    }
                }
            }
        }
        System.out.print(report(before, load(), (System.nanoTime() - started) / 60e9));
    }

    // ---------------------------------------------------------------- ours

    private void ours(String model) throws Exception {
        Path file = model.equals("gemma") ? RealModels.gemma() : RealModels.smollm2();
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of(
                "-jar",
                config.root().resolve("oam-cli/target/oam.jar").toString(),
                "stdio",
                "--model",
                file.toString()));
        Path log = config.root().resolve("bench/target/logs/sampling-" + model + ".log");
        System.err.printf(Locale.ROOT, "bench sampling: ours on %s (child stderr: %s)%n", model, log);
        inbox.clear();
        child = new StdioChannel(
                "sampling-" + model,
                command,
                log,
                Map.of(
                        dev.oam.model.llama.LlamaSettings.THREADS_VARIABLE, String.valueOf(config.threads()),
                        dev.oam.model.llama.LlamaSettings.THREADS_BATCH_VARIABLE, String.valueOf(config.threadsBatch()),
                        dev.oam.model.llama.LlamaSettings.SLOTS_VARIABLE, String.valueOf(config.sessions())));
        child.handler((line, nanos) -> {
            try {
                inbox.add(Json.parse(line));
            } catch (IOException e) {
                child.fail("not JSON: " + line);
            }
        });
        try {
            call("initialize", "{\"protocolVersion\":\"1.0\"}");
            for (String sampling : List.of("default", "greedy")) {
                String temperature = sampling.equals("greedy") ? ",\"temperature\":0" : "";
                List<String> sessions = new ArrayList<>();
                for (int s = 0; s < config.sessions(); s++) {
                    String id = sampling + "-" + s + "-" + (++ids);
                    call(
                            "session/create",
                            "{\"session\":\"" + id + "\",\"instructions\":\"" + INSTRUCTIONS
                                    + "\",\"options\":{\"maxResponseTokens\":" + config.tokens() + temperature + "}}");
                    sessions.add(id);
                }
                // one session alone: a warm-up turn, then rounds one after the other
                oursTurns(List.of(sessions.get(0)));
                double alone = 0;
                long t0 = System.nanoTime();
                for (int r = 0; r < config.rounds(); r++) {
                    alone += oursTurns(List.of(sessions.get(0)));
                }
                results.add(new Result("ours", model, sampling, 1, alone / ((System.nanoTime() - t0) / 1e9)));
                oursTurns(sessions);
                double all = 0;
                long t1 = System.nanoTime();
                for (int r = 0; r < config.rounds(); r++) {
                    all += oursTurns(sessions);
                }
                results.add(
                        new Result("ours", model, sampling, config.sessions(), all / ((System.nanoTime() - t1) / 1e9)));
                System.err.printf(Locale.ROOT, "bench sampling: %s", last(2));
            }
        } finally {
            child.close();
            child = null;
        }
    }

    /** One turn of each session, all sent at once; returns the output tokens. */
    private int oursTurns(List<String> sessions) throws Exception {
        Map<String, String> pending = new LinkedHashMap<>();
        for (int s = 0; s < sessions.size(); s++) {
            String id = "r" + (++ids);
            pending.put(id, sessions.get(s));
            child.send("{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"session/respond\",\"params\":{"
                    + "\"session\":\"" + sessions.get(s) + "\",\"prompt\":\"" + PROMPTS.get((ids + s) % PROMPTS.size())
                    + "\"}}");
        }
        child.flush();
        int tokens = 0;
        while (!pending.isEmpty()) {
            JsonNode m = next();
            String id = m.path("id").asText();
            if (pending.remove(id) != null) {
                if (m.has("error")) {
                    throw new BenchException("session/respond failed: " + Json.write(m.get("error")));
                }
                tokens += m.path("result").path("usage").path("outputTokens").asInt();
            }
        }
        // forget the turns, so every round's prompt is the same size
        for (String s : sessions) {
            call("session/reset", "{\"session\":\"" + s + "\"}");
        }
        return tokens;
    }

    private JsonNode call(String method, String params) throws Exception {
        String id = "c" + (++ids);
        child.send(
                "{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"" + method + "\",\"params\":" + params + "}");
        child.flush();
        while (true) {
            JsonNode m = next();
            if (id.equals(m.path("id").asText())) {
                if (m.has("error")) {
                    throw new BenchException(method + " failed: " + Json.write(m.get("error")));
                }
                return m.path("result");
            }
        }
    }

    private JsonNode next() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(10);
        while (true) {
            JsonNode m = inbox.poll(1, TimeUnit.SECONDS);
            if (m != null) {
                return m;
            }
            if (child.failure() != null) {
                throw new BenchException("the child stopped: " + child.failure() + child.diagnostics());
            }
            if (System.nanoTime() > deadline) {
                throw new BenchException("no answer for 10 minutes" + child.diagnostics());
            }
        }
    }

    // ---------------------------------------------------------------- theirs

    @SuppressWarnings("try") // LlamaServer.close() waits for the server to exit
    private void theirs(String model) throws Exception {
        Path binary = RealModels.llamaServer();
        RealModel real = model.equals("gemma") ? RealModel.GEMMA : RealModel.SMOLLM2;
        System.err.printf(Locale.ROOT, "bench sampling: llama-server on %s%n", model);
        try (LlamaServer server = LlamaServer.start(
                binary,
                real,
                4096 * config.sessions(),
                config.sessions(),
                config.threads(),
                "-tb",
                String.valueOf(config.threadsBatch()))) {
            URI uri = URI.create(server.baseUrl() + "/chat/completions");
            for (String sampling : List.of("default", "greedy")) {
                theirsTurns(uri, sampling, 1);
                double alone = 0;
                long t0 = System.nanoTime();
                for (int r = 0; r < config.rounds(); r++) {
                    alone += theirsTurns(uri, sampling, 1);
                }
                results.add(new Result("llama-server", model, sampling, 1, alone / ((System.nanoTime() - t0) / 1e9)));
                theirsTurns(uri, sampling, config.sessions());
                double all = 0;
                long t1 = System.nanoTime();
                for (int r = 0; r < config.rounds(); r++) {
                    all += theirsTurns(uri, sampling, config.sessions());
                }
                results.add(new Result(
                        "llama-server", model, sampling, config.sessions(), all / ((System.nanoTime() - t1) / 1e9)));
                System.err.printf(Locale.ROOT, "bench sampling: %s", last(2));
            }
        }
    }

    private int theirsTurns(URI uri, String sampling, int count) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> futures = new ArrayList<>();
        for (int s = 0; s < count; s++) {
            ObjectNode body = Json.object();
            body.putArray("messages")
                    .add(Json.object().put("role", "system").put("content", INSTRUCTIONS))
                    .add(Json.object().put("role", "user").put("content", PROMPTS.get((++ids + s) % PROMPTS.size())));
            body.put("max_tokens", config.tokens());
            if (sampling.equals("greedy")) {
                body.put("temperature", 0);
            } else {
                // ours' defaults for a session: llama-server's own defaults add min-p 0.05, which ours does not
                body.put("temperature", 0.7).put("top_k", 40).put("top_p", 0.95).put("min_p", 0);
            }
            body.put("seed", 42 + s);
            HttpRequest request = HttpRequest.newBuilder(uri)
                    .timeout(Duration.ofMinutes(10))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(Json.write(body), StandardCharsets.UTF_8))
                    .build();
            futures.add(http.sendAsync(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8)));
        }
        int tokens = 0;
        for (CompletableFuture<HttpResponse<String>> f : futures) {
            HttpResponse<String> response = f.get(10, TimeUnit.MINUTES);
            if (response.statusCode() != 200) {
                throw new BenchException("llama-server answered " + response.statusCode() + ": " + response.body());
            }
            tokens += Json.parse(response.body())
                    .path("usage")
                    .path("completion_tokens")
                    .asInt();
        }
        return tokens;
    }

    // ---------------------------------------------------------------- report

    private String last(int n) {
        StringBuilder out = new StringBuilder();
        for (Result r : results.subList(results.size() - n, results.size())) {
            out.append(String.format(
                    Locale.ROOT,
                    "%s %s %s x%d: %.1f tok/s; ",
                    r.engine(),
                    r.model(),
                    r.sampling(),
                    r.sessions(),
                    r.tokensPerSecond()));
        }
        return out.append('\n').toString();
    }

    private String report(String before, String after, double minutes) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "%noam sampling speed: %d tokens a turn, threads %d / batch %d, %d sessions, %d rounds (load %s before, "
                        + "%s after, %.1f min)%n%n",
                config.tokens(),
                config.threads(),
                config.threadsBatch(),
                config.sessions(),
                config.rounds(),
                before,
                after,
                minutes));
        out.append("| model | sampling | ours: one | llama-server: one | ratio | ours: " + config.sessions()
                + " at once | llama-server: " + config.sessions() + " at once | ratio |\n");
        out.append("|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (String model : config.models()) {
            for (String sampling : List.of("default", "greedy")) {
                double o1 = mean("ours", model, sampling, 1);
                double t1 = mean("llama-server", model, sampling, 1);
                double on = mean("ours", model, sampling, config.sessions());
                double tn = mean("llama-server", model, sampling, config.sessions());
                out.append(String.format(
                        Locale.ROOT,
                        "| %s | %s | %.1f tok/s | %.1f tok/s | %.2f | %.1f tok/s | %.1f tok/s | %.2f |%n",
                        model,
                        sampling.equals("default") ? "default (T 0.7, top-k 40, top-p 0.95)" : "greedy",
                        o1,
                        t1,
                        o1 / t1,
                        on,
                        tn,
                        on / tn));
            }
        }
        out.append("\nratio: ours / llama-server (means over the rounds; each round alternates which runs first).\n");
        return out.toString();
    }

    private double mean(String engine, String model, String sampling, int sessions) {
        return results.stream()
                .filter(r -> r.engine().equals(engine)
                        && r.model().equals(model)
                        && r.sampling().equals(sampling)
                        && r.sessions() == sessions)
                .mapToDouble(Result::tokensPerSecond)
                .average()
                .orElse(Double.NaN);
    }

    private static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException e) {
            return "?";
        }
    }
}
