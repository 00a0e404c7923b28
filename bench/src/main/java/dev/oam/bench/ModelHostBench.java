package dev.oam.bench;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.Sampling;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.model.llama.LlamaBackend;
import dev.oam.model.llama.LlamaSettings;
import dev.oam.testing.gguf.TinyGguf;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the process model host ({@code "host": "process"}) costs per token (not a test): the same greedy request on the
 * same generated model, run in this process and through a child JVM, at the {@link LanguageModel} level (the child side
 * includes encoding the request, the pipe, one JSON line per streamed delta and decoding the answer). The two sides run
 * strictly one after the other, alternating, so load from other programs hits both alike and they never compute at the
 * same time. Run it with {@code bench/run host}; progress goes to stderr, the table to stdout.
 */
public final class ModelHostBench {
    private ModelHostBench() {}

    private record Run(double millis, int outputTokens, int deltas, double firstDeltaMillis, String text) {}

    public static void main(String[] args) throws Exception {
        int runs = 5;
        int tokens = 96;
        String size = "mid";
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--runs" -> runs = Integer.parseInt(args[++i]);
                case "--tokens" -> tokens = Integer.parseInt(args[++i]);
                case "--model" -> size = args[++i];
                case "--help" -> {
                    System.out.println("bench/run host [--runs N (5)] [--tokens N (96)] [--model tiny|mid (mid)]");
                    return;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Path root = Path.of(System.getProperty("oam.bench.root", "."));
        Path file = root.resolve("bench/target/models/host-" + size + ".gguf");
        (size.equals("tiny") ? TinyGguf.tiny() : TinyGguf.mid())
                .name("host-" + size)
                .write(file);
        System.err.println("bench: model " + file);

        LlamaSettings defaults =
                LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 1, 2, 2048);
        LlamaBackend backend = new LlamaBackend(defaults, List.of("en"));
        ObjectNode spec = Json.object().put("type", "llama").put("path", file.toString());
        LanguageModel inProcess = backend.create(spec.deepCopy(), "model");
        LanguageModel child = backend.create(spec.deepCopy().put("host", "process"), "model");

        ModelRequest request = new ModelRequest(
                "You are the guard of the castle gate.",
                null,
                List.of(TranscriptEntry.Prompt.of("Tell me about the forgotten dragon of the north.", null)),
                List.of(),
                ToolCallingMode.DISALLOWED,
                false,
                null,
                new GenerationOptions(null, tokens, Sampling.GREEDY),
                -1);
        // warm-up: loads both, compiles the hot paths
        run(inProcess, request);
        run(child, request);
        List<Run> ours = new ArrayList<>();
        List<Run> hosted = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            System.err.println("bench: run " + (i + 1) + " of " + runs);
            if (i % 2 == 0) {
                ours.add(run(inProcess, request));
                hosted.add(run(child, request));
            } else {
                hosted.add(run(child, request));
                ours.add(run(inProcess, request));
            }
        }
        backend.close();
        boolean same = ours.stream().map(Run::text).distinct().count() == 1
                && hosted.stream()
                        .map(Run::text)
                        .allMatch(t -> t.equals(ours.get(0).text()));
        double perTokenIn =
                median(ours.stream().map(r -> r.millis() / r.outputTokens()).toList());
        double perTokenChild =
                median(hosted.stream().map(r -> r.millis() / r.outputTokens()).toList());
        double firstIn = median(ours.stream().map(Run::firstDeltaMillis).toList());
        double firstChild = median(hosted.stream().map(Run::firstDeltaMillis).toList());
        System.out.println("| model " + size + ", " + ours.get(0).outputTokens() + " output tokens, greedy, 1 thread, "
                + runs + " runs (medians) | in-process | process host | ratio |");
        System.out.println("|---|---|---|---|");
        System.out.printf(
                Locale.ROOT,
                "| ms per output token (whole request / output tokens) | %.2f | %.2f | %.3f |%n",
                perTokenIn,
                perTokenChild,
                perTokenChild / perTokenIn);
        System.out.printf(
                Locale.ROOT,
                "| ms to the first text delta | %.1f | %.1f | %.3f |%n",
                firstIn,
                firstChild,
                firstChild / firstIn);
        System.out.printf(
                Locale.ROOT,
                "| text deltas per request | %d | %d | |%n",
                ours.get(0).deltas(),
                hosted.get(0).deltas());
        System.out.println("same greedy text on both sides: " + same);
        System.out.flush();
        // the binding's native server thread is attached as a non-daemon thread and would keep the JVM alive
        System.exit(same ? 0 : 1);
    }

    private static Run run(LanguageModel model, ModelRequest request) throws Exception {
        AtomicInteger deltas = new AtomicInteger();
        AtomicLong first = new AtomicLong();
        long start = System.nanoTime();
        ModelResponse response = model.respond(
                request,
                new ModelListener() {
                    @Override
                    public void onText(String delta) {
                        if (deltas.getAndIncrement() == 0) {
                            first.set(System.nanoTime());
                        }
                    }
                },
                CancellationToken.create());
        long end = System.nanoTime();
        String text = response instanceof ModelResponse.Answer answer ? answer.text() : response.toString();
        return new Run(
                (end - start) / 1e6,
                Math.max(1, response.usage().outputTokens()),
                deltas.get(),
                first.get() == 0 ? Double.NaN : (first.get() - start) / 1e6,
                text);
    }

    private static double median(List<Double> values) {
        List<Double> sorted = values.stream().sorted().toList();
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }
}
