package dev.oam.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench/run state}: the first NPC turn after a load with the model's state saved beside the save, against
 * reading the whole conversation again (issue 40, point 5), on both real models, 2 threads, one lane, in one run.
 *
 * <p>A child {@code oam stdio --model FILE} ({@code OAM_LLAMA_THREADS=2}, {@code OAM_LLAMA_SLOTS=1},
 * {@code OAM_SAVE_DIR} a temporary folder). An NPC whose persona and memory make a prompt of about 2,000 tokens talks
 * once; {@code npc/state} saves it with {@code modelState} (its wall time and the file's size are reported). Then, R
 * rounds, alternating: an unrelated NPC talks (so the one lane holds nothing of the saved NPC, as after a restart), and
 * the save is restored without its model state (re-read) or with it (state), and the restored NPC talks, streamed:
 * first words (the first {@code lineDelta}) and the whole turn, from the {@code npc/restore} request on, so the state's
 * load is counted.
 */
public final class StateBench {
    private final Path root;
    private final int rounds;
    private final BlockingQueue<JsonNode> inbox = new LinkedBlockingQueue<>();
    private StdioChannel child;
    private int ids;

    private StateBench(Path root, int rounds) {
        this.root = root;
        this.rounds = rounds;
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(System.getProperty("oam.bench.root", "."))
                .toAbsolutePath()
                .normalize();
        int rounds = 3;
        List<String> models = new ArrayList<>(List.of("smollm2", "gemma"));
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--model" -> models = List.of(args[++i]);
                default -> {
                    System.err.println("usage: bench/run state [--rounds N (3)] [--model smollm2|gemma]");
                    System.exit(2);
                }
            }
        }
        StateBench bench = new StateBench(root, rounds);
        System.out.println("| model | conversation tokens | state file | save (npc/state) | first words: re-read |"
                + " first words: state | whole turn: re-read | whole turn: state | ratio (first words) |");
        System.out.println("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
        for (String model : models) {
            bench.run(model);
        }
    }

    private static String persona() {
        List<String> topics = List.of(
                "the forge",
                "the mine",
                "the river",
                "the old bridge",
                "the castle",
                "the market",
                "the temple",
                "the harbour",
                "the northern pass",
                "the king's road");
        ObjectNode persona = Json.object()
                .put("name", "Gorm")
                .put("role", "the village blacksmith")
                .put("personality", "Gruff but fair; proud of his craft; distrusts strangers until they pay.");
        List<String> knowledge = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            knowledge.add("In the year " + (1200 + i) + " the people of " + topics.get(i % topics.size())
                    + " traded " + (i * 7 % 40 + 3) + " iron bars for grain, and the smith "
                    + (i % 2 == 0 ? "kept" : "lost")
                    + " the ledger of that season.");
        }
        persona.set("knowledge", Json.strings(knowledge));
        return Json.write(persona);
    }

    private void run(String model) throws Exception {
        Path file = Path.of(System.getenv(
                model.equals("gemma")
                        ? dev.oam.testing.RealModels.GEMMA_VARIABLE
                        : dev.oam.testing.RealModels.SMOLLM2_VARIABLE));
        Path saves = Files.createTempDirectory("oam-state-bench");
        List<String> command = List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--enable-native-access=ALL-UNNAMED",
                "-jar",
                root.resolve("oam-cli/target/oam.jar").toString(),
                "stdio",
                "--model",
                file.toString());
        Path log = root.resolve("bench/target/logs/state-" + model + ".log");
        System.err.printf(Locale.ROOT, "bench state: %s (child stderr: %s)%n", model, log);
        inbox.clear();
        child = new StdioChannel(
                "state-" + model,
                command,
                log,
                Map.of(
                        dev.oam.model.llama.LlamaSettings.THREADS_VARIABLE, "2",
                        dev.oam.model.llama.LlamaSettings.THREADS_BATCH_VARIABLE, "2",
                        dev.oam.model.llama.LlamaSettings.SLOTS_VARIABLE, "1",
                        dev.oam.bridge.spi.ExtensionContext.SAVE_FOLDER_VARIABLE, saves.toString()));
        child.handler((line, nanos) -> {
            try {
                inbox.add(Json.parse(line));
            } catch (IOException e) {
                child.fail("not JSON: " + line);
            }
        });
        String options = "{\"temperature\":0,\"compactAfterTurns\":0,\"maximumResponseTokens\":48}";
        try {
            call("initialize", "{\"protocolVersion\":\"1.0\"}");
            call("npc/create", "{\"npc\":\"gorm\",\"persona\":" + persona() + ",\"options\":" + options + "}");
            call(
                    "npc/create",
                    "{\"npc\":\"filler\",\"persona\":{\"name\":\"Ana\",\"role\":\"a fisher\"},\"options\":" + options
                            + "}");
            call("npc/talk", "{\"npc\":\"gorm\",\"line\":\"Hello, smith. What happened in the year 1231?\"}");
            long t0 = System.nanoTime();
            JsonNode saved = call("npc/state", "{\"npc\":\"gorm\",\"modelState\":true}");
            double saveSeconds = (System.nanoTime() - t0) / 1e9;
            if (saved.has("warnings")) {
                throw new BenchException("the state was not saved: " + saved.get("warnings"));
            }
            ObjectNode state = (ObjectNode) saved.get("state");
            JsonNode reference = state.get("modelState");
            ObjectNode withoutState = state.deepCopy();
            withoutState.remove("modelState");
            List<double[]> reread = new ArrayList<>();
            List<double[]> restored = new ArrayList<>();
            for (int r = 0; r < rounds; r++) {
                for (boolean useState : r % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
                    call("npc/talk", "{\"npc\":\"filler\",\"line\":\"Any fish today?\"}");
                    String id = "g" + (++ids);
                    double[] times = loadAndTalk(id, useState ? state : withoutState);
                    (useState ? restored : reread).add(times);
                    call("npc/delete", "{\"npc\":\"" + id + "\"}");
                }
            }
            double firstReread = median(reread, 0);
            double firstState = median(restored, 0);
            System.out.printf(
                    Locale.ROOT,
                    "| %s | %d | %.1f MB | %.2f s | %.2f s | %.2f s | %.2f s | %.2f s | %.1fx |%n",
                    model,
                    reference.path("tokens").asInt(),
                    reference.path("bytes").asLong() / 1e6,
                    saveSeconds,
                    firstReread,
                    firstState,
                    median(reread, 1),
                    median(restored, 1),
                    firstReread / firstState);
        } finally {
            child.close();
            child = null;
        }
    }

    /**
     * Restores {@code state} as NPC {@code id} and talks, streamed: seconds to the first lineDelta and to the reply.
     */
    private double[] loadAndTalk(String id, ObjectNode state) throws Exception {
        long start = System.nanoTime();
        JsonNode restore = call("npc/restore", "{\"npc\":\"" + id + "\",\"state\":" + Json.write(state) + "}");
        if (state.has("modelState") && restore.path("warnings").toString().contains("model's state")) {
            throw new BenchException("the state was not restored: " + restore.get("warnings"));
        }
        String talk = "t" + (++ids);
        child.send("{\"jsonrpc\":\"2.0\",\"id\":\"" + talk + "\",\"method\":\"npc/talk\",\"params\":{\"npc\":\"" + id
                + "\",\"line\":\"And what do you charge to mend a helmet?\",\"stream\":true}}");
        child.flush();
        double first = -1;
        while (true) {
            JsonNode m = next();
            if ("npc/event".equals(m.path("method").asText())
                    && "lineDelta"
                            .equals(m.path("params").path("event").path("type").asText())
                    && first < 0) {
                first = (System.nanoTime() - start) / 1e9;
            }
            if (talk.equals(m.path("id").asText())) {
                if (m.has("error")) {
                    throw new BenchException("npc/talk failed: " + Json.write(m.get("error")));
                }
                double whole = (System.nanoTime() - start) / 1e9;
                return new double[] {first < 0 ? whole : first, whole};
            }
        }
    }

    private static double median(List<double[]> runs, int index) {
        double[] values = runs.stream().mapToDouble(r -> r[index]).sorted().toArray();
        return values[values.length / 2];
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
}
