package dev.oam.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code bench/run serve}: N streaming Chat Completions requests, C at a time, from this process to a server child on
 * loopback: {@code oam serve} on the scripted model (OAM_SCRIPT), then the raw baseline ({@link StaticSseServer}: the
 * same server library answering a fixed stream of the same shape). Every request must be answered exactly once: status
 * 200, one stream ending in {@code [DONE]}, the scripted text reassembled, and (for oam) a completion id no other
 * response had. Reports requests/s and p50/p99 latency of each and the ratios. A benchmark, not a test: it fails only
 * when a measurement could not be taken.
 */
public final class ServeBench {
    static final List<String> PIECES =
            List.of("The road ", "north is ", "long and ", "cold, ", "traveller; ", "rest ", "here ", "tonight.");
    static final String TEXT = String.join("", PIECES);

    private ServeBench() {}

    record Run(String name, int requests, double seconds, Dist latency, int distinctIds) {
        double rate() {
            return requests / seconds;
        }
    }

    public static void main(String[] args) throws Exception {
        int requests = 2000;
        int concurrency = 32;
        int warmup = 400;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--requests" -> requests = Integer.parseInt(args[++i]);
                case "--concurrency" -> concurrency = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--quick" -> {
                    requests = 300;
                    concurrency = 16;
                    warmup = 100;
                }
                case "--help" -> {
                    System.err.println(
                            "bench/run serve [--requests N (2000)] [--concurrency C (32)] [--warmup W (400)] [--quick]");
                    return;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (see --help)");
            }
        }
        Path root = Path.of(System.getProperty("oam.bench.root", ".")).toAbsolutePath();
        Path logs = root.resolve("bench/target/logs");
        Files.createDirectories(logs);
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("java.class.path");
        List<String> childOpts =
                List.of((System.getenv().getOrDefault(Bench.CHILD_OPTS_VARIABLE, "")).split("\\s+")).stream()
                        .filter(s -> !s.isBlank())
                        .toList();
        try {
            List<String> oam = new ArrayList<>(List.of(java));
            oam.addAll(childOpts);
            oam.addAll(List.of(
                    "-cp",
                    classPath,
                    "dev.oam.cli.Main",
                    "serve",
                    "--port",
                    "0",
                    "--log-level",
                    "warning",
                    "--max-concurrent",
                    Integer.toString(concurrency),
                    "--max-queued",
                    Integer.toString(requests)));
            String script = "{\"steps\":[],\"fallback\":{\"text\":"
                    + Json.mapper().writeValueAsString(TEXT) + ",\"chunks\":" + PIECES.size() + "}}";
            Run served = measure(
                    "oam serve (scripted)",
                    oam,
                    script,
                    logs.resolve("serve-oam.err"),
                    requests,
                    concurrency,
                    warmup,
                    true);
            List<String> raw = new ArrayList<>(List.of(java));
            raw.addAll(childOpts);
            raw.addAll(List.of("-cp", classPath, "dev.oam.bench.StaticSseServer"));
            Run baseline = measure(
                    "Jetty static stream",
                    raw,
                    null,
                    logs.resolve("serve-static.err"),
                    requests,
                    concurrency,
                    warmup,
                    false);
            report(served, baseline, concurrency);
        } finally {
            Children.destroyAll();
        }
    }

    private static Run measure(
            String name,
            List<String> command,
            String script,
            Path log,
            int requests,
            int concurrency,
            int warmup,
            boolean uniqueIds)
            throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.to(log.toFile()));
        if (script != null) {
            builder.environment().put(dev.oam.core.model.ScriptedModel.SCRIPT_VARIABLE, script);
        }
        Process process = builder.start();
        Children.register(process);
        BufferedReader out =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        int port = -1;
        for (String line; (line = out.readLine()) != null; ) {
            if (line.startsWith("oam serve: listening on http://127.0.0.1:")) {
                port = Integer.parseInt(line.replaceAll(".*127\\.0\\.0\\.1:(\\d+).*", "$1"));
                break;
            }
            if (line.strip().matches("\\d+")) {
                port = Integer.parseInt(line.strip());
                break;
            }
        }
        if (port < 0) {
            throw new BenchException(name + " did not start; see " + log);
        }
        System.err.println("bench serve: " + name + " on port " + port + ": " + warmup + " warm-up requests, then "
                + requests + " measured, " + concurrency + " at a time");
        URI uri = URI.create("http://127.0.0.1:" + port + "/v1/chat/completions");
        try (HttpClient client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .executor(Executors.newVirtualThreadPerTaskExecutor())
                .build()) {
            load(client, uri, warmup, concurrency, new ConcurrentHashMap<String, Boolean>().keySet(true), uniqueIds);
            Set<String> ids = new ConcurrentHashMap<String, Boolean>().keySet(true);
            long start = System.nanoTime();
            long[] latencies = load(client, uri, requests, concurrency, ids, uniqueIds);
            double seconds = (System.nanoTime() - start) / 1e9;
            if (uniqueIds && ids.size() != requests) {
                throw new BenchException(
                        name + ": " + requests + " requests got " + ids.size() + " distinct completions");
            }
            return new Run(name, requests, seconds, Dist.of(latencies), ids.size());
        } finally {
            process.getOutputStream().close();
            Children.stop(process, 500);
        }
    }

    /** {@code total} requests, {@code concurrency} at a time; every one must be answered once, in full. */
    private static long[] load(
            HttpClient client, URI uri, int total, int concurrency, Set<String> ids, boolean uniqueIds)
            throws Exception {
        long[] latencies = new long[total];
        AtomicInteger next = new AtomicInteger();
        String body =
                "{\"model\":\"system\",\"stream\":true,\"messages\":[{\"role\":\"user\",\"content\":\"Which way to the pass?\"}]}";
        try (ExecutorService workers = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<?>> running = new ArrayList<>();
            for (int w = 0; w < concurrency; w++) {
                running.add(workers.submit(() -> {
                    for (int i; (i = next.getAndIncrement()) < total; ) {
                        long t0 = System.nanoTime();
                        HttpResponse<java.util.stream.Stream<String>> response = client.send(
                                HttpRequest.newBuilder(uri)
                                        .header("Content-Type", "application/json")
                                        .POST(HttpRequest.BodyPublishers.ofString(body))
                                        .build(),
                                HttpResponse.BodyHandlers.ofLines());
                        if (response.statusCode() != 200) {
                            throw new BenchException("request " + i + ": HTTP " + response.statusCode());
                        }
                        StringBuilder text = new StringBuilder();
                        Set<String> seen = new HashSet<>();
                        boolean[] done = {false};
                        try (var lines = response.body()) {
                            for (String line : (Iterable<String>) lines::iterator) {
                                if (!line.startsWith("data: ")) {
                                    continue;
                                }
                                String data = line.substring(6);
                                if (data.equals("[DONE]")) {
                                    if (done[0]) {
                                        throw new BenchException("request " + i + ": two [DONE]");
                                    }
                                    done[0] = true;
                                    continue;
                                }
                                JsonNode chunk = Json.parse(data);
                                seen.add(chunk.get("id").asText());
                                JsonNode content = chunk.at("/choices/0/delta/content");
                                if (content.isTextual()) {
                                    text.append(content.asText());
                                }
                            }
                        }
                        latencies[i] = System.nanoTime() - t0;
                        if (!done[0] || !text.toString().equals(TEXT) || seen.size() != 1) {
                            throw new BenchException("request " + i + ": incomplete or wrong stream (" + text + ")");
                        }
                        if (uniqueIds && !ids.add(seen.iterator().next())) {
                            throw new BenchException("request " + i + ": a completion id was answered twice");
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> future : running) {
                future.get();
            }
        }
        return latencies;
    }

    private static void report(Run served, Run baseline, int concurrency) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "%nServe load: %d streaming requests, %d concurrent, one client process on loopback%n",
                served.requests(),
                concurrency));
        out.append(String.format(
                Locale.ROOT, "%-24s %12s %10s %10s %10s%n", "server", "requests/s", "p50 ms", "p99 ms", "answered"));
        for (Run run : List.of(served, baseline)) {
            out.append(String.format(
                    Locale.ROOT,
                    "%-24s %12.0f %10.2f %10.2f %10s%n",
                    run.name(),
                    run.rate(),
                    run.latency().p50() / 1e6,
                    run.latency().p99() / 1e6,
                    run.requests() + "/" + run.requests()));
        }
        out.append(String.format(
                Locale.ROOT,
                "ratio oam/baseline: throughput %.2fx, p50 %.2fx, p99 %.2fx%n",
                served.rate() / baseline.rate(),
                served.latency().p50() / (double) baseline.latency().p50(),
                served.latency().p99() / (double) baseline.latency().p99()));
        out.append(String.format(
                Locale.ROOT,
                "every oam request answered exactly once: %d distinct completion ids for %d requests%n",
                served.distinctIds(),
                served.requests()));
        System.out.print(out);
    }
}
