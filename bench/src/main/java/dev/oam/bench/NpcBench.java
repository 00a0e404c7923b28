package dev.oam.bench;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bench.eval.EvalReport;
import dev.oam.core.json.Json;
import dev.oam.testing.RealModels;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code bench/run npc}: NPC response time over {@code oam stdio} (issue 30), measured as the table was: a
 * child {@code java -jar oam.jar stdio --model FILE} with {@code OAM_LLAMA_THREADS=2} and the default engine,
 * temperature 0, one conversation of streamed {@code npc/talk} turns with a blacksmith, on each real model, once
 * without tools and once with one tool named as {@code groundingTool} (answered by the harness at once with a fixed
 * output). Per turn: the time from sending the request to the first {@code emotion} event, to the first
 * {@code lineDelta} ("first words") and to the response, and the response's usage. Then {@code npc/bark}s on the same
 * NPC, each timed to its response.
 *
 * <p>With {@code --baseline-jar} every conversation also runs on that jar, one child after the other (never two at
 * once), the jars' order alternating per model, and the report sets both side by side with ratios.
 *
 * <p>A turn or bark that answers with an error ends the run with exit code 1 (a benchmark of failing turns measures
 * nothing); one that runs past {@code --turn-timeout} is cancelled ({@code npc/cancel}) and recorded as a timeout,
 * which counts as slower than any answer in the medians.
 */
public final class NpcBench {
    /** The issue's own figures, measured before any of its work (first words p50 / whole turn p50, seconds). */
    private static final Map<String, double[]> BEFORE = Map.of(
            "smollm2|no tool", new double[] {1.50, 1.95},
            "smollm2|tool", new double[] {3.96, 4.51},
            "gemma|no tool", new double[] {1.02, 1.46},
            "gemma|tool", new double[] {5.85, 6.63});

    private static final double GOAL_FIRST_NO_TOOL = 1.0;
    private static final double GOAL_FIRST_TOOL = 1.5;
    private static final double GOAL_CACHED = 0.90;
    private static final double GOAL_BARK = 0.5;

    private static final String PERSONA = "{\"name\":\"Gorm\",\"role\":\"the village blacksmith\","
            + "\"personality\":\"Gruff but fair; proud of his work and short with words.\"}";
    private static final String TOOL_NAME = "check_inventory";
    private static final String TOOL =
            "{\"name\":\"" + TOOL_NAME + "\",\"description\":\"Look up the forge's stock, its prices "
                    + "and the news customers brought in.\",\"parameters\":{\"type\":\"object\",\"properties\":{\"item\":{\"type\":\"string\","
                    + "\"description\":\"The item or topic the player asked about.\"}},\"required\":[\"item\"]}}";
    /** What the tool answers, whatever it is asked: the same facts every turn. */
    private static final String TOOL_OUTPUT =
            "{\"forge\":\"Gorm's forge\",\"stock\":[{\"item\":\"iron sword\",\"count\":3,"
                    + "\"price\":45},{\"item\":\"steel shield\",\"count\":1,\"price\":60},{\"item\":\"horseshoe\",\"count\":20,\"price\":2}],"
                    + "\"currency\":\"gold\",\"sharpening\":\"5 gold, ready tomorrow\",\"rumour\":\"Wolves were seen near the old mill.\"}";
    /** The player's lines, in order (cycled when --turns asks for more). */
    static final List<String> LINES = List.of(
            "Good morning! What do you sell here?",
            "How much is an iron sword?",
            "Do you have any shields in stock?",
            "Heard any rumours around town lately?",
            "Could you sharpen my axe by tomorrow?",
            "Thanks, that is all for today. Goodbye!",
            "Wait, one more thing: do you sell horseshoes?",
            "Alright, I will take two of them.");

    private static final List<String> SITUATIONS = List.of(
            "Rain starts falling on the forge.",
            "A customer walks past without stopping.",
            "The fire in the forge burns low.",
            "A guard passes by on patrol.",
            "Evening comes and the market empties.",
            "A horse neighs outside the smithy.");

    record Config(
            Path root,
            List<String> models,
            int turns,
            int barks,
            int threads,
            int turnTimeout,
            Path jar,
            Path baselineJar,
            Map<String, String> variants,
            List<String> modes) {
        Config(
                Path root,
                List<String> models,
                int turns,
                int barks,
                int threads,
                int turnTimeout,
                Path jar,
                Path baselineJar) {
            this(
                    root,
                    models,
                    turns,
                    barks,
                    threads,
                    turnTimeout,
                    jar,
                    baselineJar,
                    Map.of(),
                    List.of("no tool", "tool"));
        }
    }

    /** One timed request: a talk turn (kind "turn") or a bark (kind "bark"); times in ms, null when not seen. */
    record Turn(
            String jar,
            String model,
            String mode,
            String kind,
            int index,
            String input,
            Double emotionMs,
            Double firstWordsMs,
            Double turnMs,
            Integer inputTokens,
            Integer cachedInputTokens,
            Integer outputTokens,
            Integer toolCalls,
            Integer lineDeltas,
            String emotion,
            String line,
            Boolean isFallback,
            boolean timeout) {}

    /** The turn or bark answered with an error: the run stops. */
    static final class TurnFailed extends Exception {
        private static final long serialVersionUID = 1L;

        TurnFailed(String message) {
            super(message);
        }
    }

    private record Message(JsonNode json, long at) {}

    private final Config config;
    private final List<Turn> turns = new ArrayList<>();
    private PrintStream details;
    private StdioChannel child;
    private final BlockingQueue<Message> inbox = new LinkedBlockingQueue<>();
    private int ids;

    private NpcBench(Config config) {
        this.config = config;
    }

    public static void main(String[] args) {
        Path root = Path.of(System.getProperty("oam.bench.root", "."))
                .toAbsolutePath()
                .normalize();
        List<String> models = List.of("smollm2", "gemma");
        int turnCount = 6;
        int barks = 6;
        int threads = 2;
        int turnTimeout = 120;
        Path baseline = null;
        Path reportOf = null;
        Map<String, String> variants = new java.util.LinkedHashMap<>();
        List<String> modes = List.of("no tool", "tool");
        for (int i = 0; i < args.length; i++) {
            try {
                switch (args[i]) {
                    case "--models" -> models = List.of(args[++i].split(","));
                    case "--turns" -> turnCount = Integer.parseInt(args[++i]);
                    case "--barks" -> barks = Integer.parseInt(args[++i]);
                    case "--threads" -> threads = Integer.parseInt(args[++i]);
                    case "--turn-timeout" -> turnTimeout = Integer.parseInt(args[++i]);
                    case "--baseline-jar" ->
                        baseline = Path.of(args[++i]).toAbsolutePath().normalize();
                    case "--report" -> reportOf = Path.of(args[++i]);
                    case "--variant" -> {
                        String v = args[++i];
                        int eq = v.indexOf('=');
                        if (eq < 1) {
                            throw new NumberFormatException();
                        }
                        Json.parse(v.substring(eq + 1)); // checked here, not in the child
                        variants.put(v.substring(0, eq), v.substring(eq + 1));
                    }
                    case "--modes" ->
                        modes = List.of(args[++i].replace("notool", "no tool").split(","));
                    case "--help" -> {
                        System.out.println("""
                                usage: bench/run npc [--models smollm2,gemma] [--turns N] [--barks N] [--turn-timeout S] \
                                [--threads N] [--baseline-jar OAM.JAR]
                                  --models M,…      smollm2 and/or gemma (default both; bin/lib/real-models.sh provides them)
                                  --turns N         streamed npc/talk turns of the one conversation per model and mode (default 6)
                                  --barks N         npc/bark requests per model and mode, after the conversation (default 6)
                                  --turn-timeout S  a turn or bark still running after S seconds is cancelled and recorded as a
                                                    timeout (default 120)
                                  --threads N       OAM_LLAMA_THREADS of the child (default 2, as the issue measured)
                                  --baseline-jar F  the same conversations on that oam.jar too, the jars' order alternating per
                                                    model; the report sets both side by side with ratios
                                  --report F.jsonl  no run: the report of the turns in that file (bench/target/npc.jsonl of a run)
                                  --variant N=JSON  a repetition study instead of the timing one: the conversation once per
                                                    variant (repeatable), JSON being the NPC options it adds (for example
                                                    {"temperature":0.7,"sampler":{"minP":0,"dry":{"multiplier":0}}}); the
                                                    report is the repetition table (no barks, no baseline)
                                  --modes M,…       notool and/or tool (default both)
                                The child is `java -jar oam-cli/target/oam.jar stdio --model FILE`; its stderr goes to
                                bench/target/logs/npc-*.log, one JSON line per turn and bark to bench/target/npc.jsonl.""");
                        return;
                    }
                    default -> {
                        System.err.println("bench npc: unknown option " + args[i] + " (--help)");
                        System.exit(2);
                    }
                }
            } catch (ArrayIndexOutOfBoundsException | NumberFormatException | IOException e) {
                System.err.println("bench npc: " + args[i - 1] + " needs a value (--help)");
                System.exit(2);
            }
        }
        int code = 1;
        try {
            if (reportOf != null) {
                reportOnly(root, reportOf);
                return;
            }
            for (String model : models) {
                if (!model.equals("smollm2") && !model.equals("gemma")) {
                    throw new IllegalArgumentException("--models: smollm2 or gemma, not " + model);
                }
            }
            if (turnCount < 1 || barks < 0 || turnTimeout < 1 || threads < 1) {
                throw new IllegalArgumentException(
                        "--turns, --turn-timeout and --threads are at least 1, --barks at least 0");
            }
            Path jar = root.resolve("oam-cli/target/oam.jar");
            for (Path file : baseline == null ? List.of(jar) : List.of(jar, baseline)) {
                if (!Files.isRegularFile(file)) {
                    throw new IllegalArgumentException(file + " is not a file");
                }
            }
            new NpcBench(new Config(
                            root,
                            models,
                            turnCount,
                            variants.isEmpty() ? barks : 0,
                            threads,
                            turnTimeout,
                            jar,
                            variants.isEmpty() ? baseline : null,
                            variants,
                            modes))
                    .run();
            code = 0;
        } catch (TurnFailed e) {
            System.err.println("bench npc: FAILED: " + e.getMessage());
        } catch (Exception e) {
            System.err.println("bench npc: " + e);
            e.printStackTrace(System.err);
        } finally {
            Children.destroyAll();
        }
        System.exit(code);
    }

    /** The report of an earlier run's turns; its load and duration are not in the file. */
    private static void reportOnly(Path root, Path file) throws IOException {
        List<Turn> read = new ArrayList<>();
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (!line.isBlank()) {
                read.add(Json.mapper().treeToValue(Json.parse(line), Turn.class));
            }
        }
        List<String> models = read.stream().map(Turn::model).distinct().toList();
        boolean baseline = read.stream().anyMatch(t -> t.jar().equals("baseline"));
        int turnCount = read.stream()
                .filter(t -> t.kind().equals("turn"))
                .mapToInt(Turn::index)
                .max()
                .orElse(0);
        int barkCount = read.stream()
                .filter(t -> t.kind().equals("bark"))
                .mapToInt(Turn::index)
                .max()
                .orElse(0);
        NpcBench bench =
                new NpcBench(new Config(root, models, turnCount, barkCount, 0, 0, file, baseline ? file : null));
        bench.turns.addAll(read);
        System.out.print(bench.report("not recorded", "not recorded", Double.NaN));
    }

    private void run() throws Exception {
        String loadBefore = loadavg();
        long started = System.nanoTime();
        Files.createDirectories(config.root().resolve("bench/target/logs"));
        Path jsonl = config.root().resolve("bench/target/npc.jsonl");
        details = new PrintStream(Files.newOutputStream(jsonl), true, StandardCharsets.UTF_8);
        try {
            for (int m = 0; m < config.models().size(); m++) {
                String model = config.models().get(m);
                Path file = model.equals("gemma") ? RealModels.gemma() : RealModels.smollm2();
                if (!config.variants().isEmpty()) {
                    // the variants' order alternates per model, one child per variant
                    List<String> names = new ArrayList<>(config.variants().keySet());
                    if (m % 2 == 1) {
                        java.util.Collections.reverse(names);
                    }
                    for (String name : names) {
                        runChild(name, model, file);
                    }
                    continue;
                }
                List<String> jars = new ArrayList<>(List.of("this"));
                if (config.baselineJar() != null) {
                    jars.add(m % 2 == 0 ? 1 : 0, "baseline");
                }
                for (String jar : jars) {
                    runChild(jar, model, file);
                }
            }
        } finally {
            details.close();
        }
        String loadAfter = loadavg();
        double minutes = (System.nanoTime() - started) / 60e9;
        if (!config.variants().isEmpty()) {
            System.out.print(repetitionReport(loadBefore, loadAfter, minutes));
            return;
        }
        System.out.print(report(loadBefore, loadAfter, minutes));
    }

    /** One child on one model: the conversation and the barks without a tool, then with the grounding tool. */
    private void runChild(String jar, String model, Path file) throws Exception {
        Path jarFile = jar.equals("baseline") ? config.baselineJar() : config.jar();
        Path log = config.root().resolve("bench/target/logs/npc-" + model + "-" + jar + ".log");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        String extra =
                System.getenv().getOrDefault(Bench.CHILD_OPTS_VARIABLE, "").trim();
        if (!extra.isEmpty()) {
            command.addAll(List.of(extra.split("\\s+")));
        }
        command.add("-XX:ErrorFile=" + config.root().resolve("bench/target/logs/hs_err_%p.log"));
        command.addAll(List.of("-jar", jarFile.toString(), "stdio", "--model", file.toString()));
        System.err.printf(Locale.ROOT, "bench npc: %s on %s (%s), child stderr: %s%n", model, jar, jarFile, log);
        inbox.clear();
        child = new StdioChannel(
                "npc-" + model + "-" + jar,
                command,
                log,
                Map.of(dev.oam.model.llama.LlamaSettings.THREADS_VARIABLE, String.valueOf(config.threads())));
        child.handler((line, nanos) -> {
            try {
                inbox.add(new Message(Json.parse(line), nanos));
            } catch (IOException e) {
                child.fail("the child wrote a line that is not JSON: " + line);
            }
        });
        try {
            call("initialize", "{\"protocolVersion\":\"1.0\"}");
            for (String mode : config.modes()) {
                String npc = model + "-" + (mode.equals("tool") ? "tool" : "plain");
                boolean tool = mode.equals("tool");
                String variant = config.variants().get(jar);
                String options =
                        variant == null ? "\"temperature\":0" : variant.strip().replaceAll("^\\{|\\}$", "");
                call(
                        "npc/create",
                        "{\"npc\":\"" + npc + "\",\"persona\":" + PERSONA + (tool ? ",\"tools\":[" + TOOL + "]" : "")
                                + ",\"options\":{" + options
                                + (tool ? ",\"groundingTool\":\"" + TOOL_NAME + "\"" : "") + "}}");
                for (int t = 1; t <= config.turns(); t++) {
                    record(talk(jar, model, mode, npc, t, LINES.get((t - 1) % LINES.size())));
                }
                for (int b = 1; b <= config.barks(); b++) {
                    record(bark(jar, model, mode, npc, b, SITUATIONS.get((b - 1) % SITUATIONS.size())));
                }
                call("npc/delete", "{\"npc\":\"" + npc + "\"}");
            }
        } finally {
            child.close();
            child = null;
        }
    }

    private Turn talk(String jar, String model, String mode, String npc, int index, String line) throws Exception {
        String id = "talk-" + (++ids);
        long start = send(id, "npc/talk", "{\"npc\":\"" + npc + "\",\"line\":" + quote(line) + ",\"stream\":true}");
        long deadline = start + TimeUnit.SECONDS.toNanos(config.turnTimeout());
        Double emotion = null;
        Double first = null;
        int deltas = 0;
        int toolCalls = 0;
        while (true) {
            Message m = next(deadline);
            if (m == null) {
                cancel(npc, id);
                return new Turn(
                        jar, model, mode, "turn", index, line, emotion, first, null, null, null, null, toolCalls,
                        deltas, null, null, null, true);
            }
            JsonNode json = m.json();
            String method = json.path("method").asText();
            if (method.equals("tool/call")) {
                toolCalls++;
                reply(json, "{\"output\":" + TOOL_OUTPUT + "}");
            } else if (method.equals("npc/event")
                    && id.equals(json.path("params").path("requestId").asText())) {
                String type = json.path("params").path("event").path("type").asText();
                if (type.equals("emotion") && emotion == null) {
                    emotion = ms(start, m.at());
                } else if (type.equals("lineDelta")) {
                    deltas++;
                    if (first == null) {
                        first = ms(start, m.at());
                    }
                }
            } else if (isResponse(json) && id.equals(json.path("id").asText())) {
                double turn = ms(start, m.at());
                if (json.has("error")) {
                    record(new Turn(
                            jar,
                            model,
                            mode,
                            "turn",
                            index,
                            line,
                            emotion,
                            first,
                            turn,
                            null,
                            null,
                            null,
                            toolCalls,
                            deltas,
                            null,
                            "error: " + Json.write(json.get("error")),
                            null,
                            false));
                    throw new TurnFailed(String.format(
                            Locale.ROOT,
                            "turn %d of %s, %s, on %s answered with an error: %s "
                                    + "(child stderr: bench/target/logs/npc-%s-%s.log)",
                            index,
                            model,
                            mode,
                            jarLabel(jar),
                            Json.write(json.get("error")),
                            model,
                            jar));
                }
                JsonNode result = json.path("result");
                JsonNode usage = result.path("usage");
                return new Turn(
                        jar,
                        model,
                        mode,
                        "turn",
                        index,
                        line,
                        emotion,
                        first,
                        turn,
                        usage.path("inputTokens").asInt(),
                        usage.path("cachedInputTokens").asInt(),
                        usage.path("outputTokens").asInt(),
                        toolCalls,
                        deltas,
                        result.path("emotion").asText(),
                        result.path("line").asText(),
                        result.path("isFallback").asBoolean(false),
                        false);
            }
        }
    }

    private Turn bark(String jar, String model, String mode, String npc, int index, String situation) throws Exception {
        String id = "bark-" + (++ids);
        long start = send(id, "npc/bark", "{\"npc\":\"" + npc + "\",\"situation\":" + quote(situation) + "}");
        long deadline = start + TimeUnit.SECONDS.toNanos(config.turnTimeout());
        while (true) {
            Message m = next(deadline);
            if (m == null) {
                cancel(npc, id);
                return new Turn(
                        jar, model, mode, "bark", index, situation, null, null, null, null, null, null, null, null,
                        null, null, null, true);
            }
            JsonNode json = m.json();
            if (isResponse(json) && id.equals(json.path("id").asText())) {
                double took = ms(start, m.at());
                if (json.has("error")) {
                    throw new TurnFailed(String.format(
                            Locale.ROOT,
                            "bark %d of %s, %s, on %s answered with an error: %s",
                            index,
                            model,
                            mode,
                            jarLabel(jar),
                            Json.write(json.get("error"))));
                }
                return new Turn(
                        jar,
                        model,
                        mode,
                        "bark",
                        index,
                        situation,
                        null,
                        null,
                        took,
                        null,
                        null,
                        null,
                        null,
                        null,
                        null,
                        json.path("result").path("line").asText(),
                        null,
                        false);
            }
        }
    }

    /** A timed-out request: npc/cancel, then its answer (an error), waited for up to a minute. */
    private void cancel(String npc, String id) throws Exception {
        System.err.printf(Locale.ROOT, "bench npc: %s ran past %d s: cancelling%n", id, config.turnTimeout());
        send("cancel-" + (++ids), "npc/cancel", "{\"npc\":\"" + npc + "\"}");
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(1);
        while (true) {
            Message m = next(deadline);
            if (m == null) {
                throw new BenchException(id + " did not end within a minute of its npc/cancel" + child.diagnostics());
            }
            if (m.json().path("method").asText().equals("tool/call")) {
                reply(m.json(), "{\"output\":" + TOOL_OUTPUT + "}");
            } else if (isResponse(m.json()) && id.equals(m.json().path("id").asText())) {
                return;
            }
        }
    }

    private String jarLabel(String jar) {
        return jar.equals("this")
                ? "this build (" + config.jar() + ")"
                : "the baseline jar (" + config.baselineJar() + ")";
    }

    private void record(Turn turn) {
        turns.add(turn);
        details.println(Json.write(Json.mapper().valueToTree(turn)));
        if (turn.kind().equals("bark")) {
            System.err.printf(
                    Locale.ROOT,
                    "bench npc: %-7s %-8s %-7s bark %d: %s%s%n",
                    turn.model(),
                    turn.jar(),
                    turn.mode(),
                    turn.index(),
                    turn.timeout() ? "TIMEOUT" : secs(turn.turnMs()),
                    turn.line() == null ? "" : " | " + turn.line());
        } else {
            System.err.printf(
                    Locale.ROOT,
                    "bench npc: %-7s %-8s %-7s turn %d: emotion %s, words %s, turn %s, in %s (cached %s), out %s, "
                            + "tools %s%s | %s%n",
                    turn.model(),
                    turn.jar(),
                    turn.mode(),
                    turn.index(),
                    secs(turn.emotionMs()),
                    secs(turn.firstWordsMs()),
                    turn.timeout() ? "TIMEOUT" : secs(turn.turnMs()),
                    turn.inputTokens(),
                    turn.cachedInputTokens(),
                    turn.outputTokens(),
                    turn.toolCalls(),
                    Boolean.TRUE.equals(turn.isFallback()) ? " FALLBACK" : "",
                    turn.line());
        }
    }

    // ---------------------------------------------------------------- repetition

    /** Words of a line, lower case, without punctuation. */
    static List<String> words(String line) {
        List<String> words = new ArrayList<>();
        for (String w : line.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}']+")) {
            if (!w.isEmpty()) {
                words.add(w);
            }
        }
        return words;
    }

    /** The share of a line's word 3-grams that occurred earlier in the same line (0 for lines under 4 words). */
    static double repeatedTrigrams(String line) {
        List<String> w = words(line);
        if (w.size() < 4) {
            return 0;
        }
        java.util.Set<List<String>> seen = new java.util.HashSet<>();
        int repeated = 0;
        int total = 0;
        for (int i = 0; i + 3 <= w.size(); i++) {
            total++;
            if (!seen.add(List.copyOf(w.subList(i, i + 3)))) {
                repeated++;
            }
        }
        return (double) repeated / total;
    }

    /** Repetition of one conversation's lines: 3-grams repeated within lines (all 3-grams pooled), lines said again. */
    record Repetition(
            int lines, double trigramShare, int repeatedLines, double meanOutputTokens, int maxOutputTokens) {}

    static Repetition repetition(List<Turn> turns) {
        List<String> earlier = new ArrayList<>();
        int repeatedLines = 0;
        double trigrams = 0;
        double repeated = 0;
        long tokens = 0;
        int maxTokens = 0;
        int lines = 0;
        for (Turn t : turns) {
            if (!t.kind().equals("turn") || t.line() == null || t.timeout()) {
                continue;
            }
            lines++;
            List<String> w = words(t.line());
            int n = Math.max(0, w.size() - 2);
            trigrams += w.size() < 4 ? 0 : n;
            repeated += w.size() < 4 ? 0 : repeatedTrigrams(t.line()) * n;
            String key = String.join(" ", w);
            if (!key.isEmpty() && earlier.contains(key)) {
                repeatedLines++;
            }
            earlier.add(key);
            int out = t.outputTokens() == null ? 0 : t.outputTokens();
            tokens += out;
            maxTokens = Math.max(maxTokens, out);
        }
        return new Repetition(
                lines,
                trigrams == 0 ? 0 : repeated / trigrams,
                repeatedLines,
                lines == 0 ? 0 : (double) tokens / lines,
                maxTokens);
    }

    private String repetitionReport(String loadBefore, String loadAfter, double minutes) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "%noam npc repetition on %s, %d turns per conversation, OAM_LLAMA_THREADS=%d (load %s before, %s after, "
                        + "%.1f min)%n%n",
                String.join(" and ", config.models()),
                config.turns(),
                config.threads(),
                loadBefore,
                loadAfter,
                minutes));
        out.append(
                "| model | mode | variant | lines | repeated 3-grams within a line | lines repeating an earlier line "
                        + "| output tokens mean / max | whole turn p50 |\n");
        out.append("|---|---|---|---:|---:|---:|---:|---:|\n");
        Map<String, List<Turn>> groups = new java.util.LinkedHashMap<>();
        for (Turn t : turns) {
            groups.computeIfAbsent(t.model() + "|" + t.mode() + "|" + t.jar(), k -> new ArrayList<>())
                    .add(t);
        }
        for (Map.Entry<String, List<Turn>> e : groups.entrySet()) {
            String[] key = e.getKey().split("\\|");
            Repetition r = repetition(e.getValue());
            double[] times = e.getValue().stream()
                    .filter(t -> t.turnMs() != null)
                    .mapToDouble(Turn::turnMs)
                    .sorted()
                    .toArray();
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %d | %.1f %% | %d | %.0f / %d | %s |%n",
                    key[0],
                    key[1],
                    key[2],
                    r.lines(),
                    100 * r.trigramShare(),
                    r.repeatedLines(),
                    r.meanOutputTokens(),
                    r.maxOutputTokens(),
                    times.length == 0 ? "-" : secs(times[times.length / 2])));
        }
        for (Map.Entry<String, String> v : config.variants().entrySet()) {
            out.append("\n").append(v.getKey()).append(": ").append(v.getValue());
        }
        out.append("\n");
        return out.toString();
    }

    // ---------------------------------------------------------------- the report

    /** Medians and shares of one jar, model and mode. Times in seconds; infinite where timeouts make up the median. */
    record Figures(
            double firstWords,
            double turn,
            double emotion,
            double cached,
            double bark,
            int turns,
            int timeouts,
            int fallbacks,
            int barks) {}

    /** Turns 2..N of the conversation (all of them when there is only one) and every bark. */
    static Figures figures(List<Turn> list) {
        List<Turn> talks = list.stream().filter(t -> t.kind().equals("turn")).toList();
        List<Turn> later =
                talks.size() > 1 ? talks.stream().filter(t -> t.index() >= 2).toList() : talks;
        List<Turn> barks = list.stream().filter(t -> t.kind().equals("bark")).toList();
        long input = 0;
        long cached = 0;
        for (Turn t : later) {
            if (t.inputTokens() != null) {
                input += t.inputTokens();
                cached += t.cachedInputTokens();
            }
        }
        return new Figures(
                median(later, Turn::firstWordsMs),
                median(later, Turn::turnMs),
                median(later, Turn::emotionMs),
                input == 0 ? Double.NaN : (double) cached / input,
                median(barks, Turn::turnMs),
                later.size(),
                (int) list.stream().filter(Turn::timeout).count(),
                (int) later.stream()
                        .filter(t -> Boolean.TRUE.equals(t.isFallback()))
                        .count(),
                barks.size());
    }

    /** The p50 in seconds; a missing time (a timeout, or no such event) counts as slower than any other. */
    static double median(List<Turn> list, java.util.function.Function<Turn, Double> time) {
        if (list.isEmpty()) {
            return Double.NaN;
        }
        List<Double> values = new ArrayList<>();
        for (Turn t : list) {
            Double ms = time.apply(t);
            values.add(ms == null ? Double.POSITIVE_INFINITY : ms / 1000);
        }
        return EvalReport.percentile(values, 50);
    }

    private String report(String loadBefore, String loadAfter, double minutes) {
        Map<String, List<Turn>> groups = new LinkedHashMap<>();
        for (String model : config.models()) {
            for (String mode : List.of("no tool", "tool")) {
                for (String jar : config.baselineJar() == null ? List.of("this") : List.of("this", "baseline")) {
                    groups.put(model + "|" + mode + "|" + jar, new ArrayList<>());
                }
            }
        }
        for (Turn t : turns) {
            groups.get(t.model() + "|" + t.mode() + "|" + t.jar()).add(t);
        }
        StringBuilder out = new StringBuilder();
        out.append(
                Double.isNaN(minutes)
                        ? String.format(
                                Locale.ROOT,
                                "oam npc response time (issue 30) on %s, %d turns and %d barks per model and mode, "
                                        + "from the turns in %s%n",
                                String.join(" and ", config.models()),
                                config.turns(),
                                config.barks(),
                                config.jar())
                        : String.format(
                                Locale.ROOT,
                                "oam npc response time (issue 30) on %s, %d turns and %d barks per model and mode, "
                                        + "OAM_LLAMA_THREADS=%d, temperature 0, %.1f minutes%n",
                                String.join(" and ", config.models()),
                                config.turns(),
                                config.barks(),
                                config.threads(),
                                minutes));
        if (!Double.isNaN(minutes)) {
            out.append(String.format(
                    Locale.ROOT,
                    "machine: %d CPUs; load average (1, 5, 15 min) before %s, after %s%n",
                    Runtime.getRuntime().availableProcessors(),
                    loadBefore,
                    loadAfter));
        }
        if (!Double.isNaN(minutes)) {
            out.append("this: ").append(config.jar()).append('\n');
            if (config.baselineJar() != null) {
                out.append("baseline: ").append(config.baselineJar()).append('\n');
            }
        }
        String env = Double.isNaN(minutes) ? "" : engineEnvironment();
        if (!env.isEmpty()) {
            out.append("child environment: ").append(env).append('\n');
        }
        String childOpts = Double.isNaN(minutes)
                ? ""
                : System.getenv().getOrDefault(Bench.CHILD_OPTS_VARIABLE, "").trim();
        if (!childOpts.isEmpty()) {
            out.append("child JVM options (OAM_BENCH_CHILD_OPTS): ")
                    .append(childOpts)
                    .append('\n');
        }
        out.append('\n');
        out.append(
                "| model | mode | jar | first words p50 | whole turn p50 | first emotion p50 | cached input | bark p50 | timeouts | "
                        + "fallbacks | issue 30, measured before: first words / whole turn | goals |\n");
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
        for (Map.Entry<String, List<Turn>> group : groups.entrySet()) {
            String[] key = group.getKey().split("\\|");
            Figures f = figures(group.getValue());
            double[] before = BEFORE.get(key[0] + "|" + key[1]);
            boolean tool = key[1].equals("tool");
            double firstGoal = tool ? GOAL_FIRST_TOOL : GOAL_FIRST_NO_TOOL;
            String goals = String.format(
                    Locale.ROOT,
                    "first words ≤ %.1f s %s; whole turn ≤ %.2f s (before) %s; cached ≥ 90 %% %s; " + "bark < 0.5 s %s",
                    firstGoal,
                    met(f.firstWords(), f.firstWords() <= firstGoal),
                    before[1],
                    met(f.turn(), f.turn() <= before[1]),
                    met(f.cached(), f.cached() >= GOAL_CACHED),
                    met(f.bark(), f.bark() < GOAL_BARK));
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %s | %s | %s | %d | %d | %.2f s / %.2f s | %s |%n",
                    label(key[0]),
                    key[1],
                    key[2],
                    secs2(f.firstWords()),
                    secs2(f.turn()),
                    secs2(f.emotion()),
                    pct(f.cached()),
                    secs2(f.bark()),
                    f.timeouts(),
                    f.fallbacks(),
                    before[0],
                    before[1],
                    goals));
        }
        if (config.baselineJar() != null) {
            out.append("\nSide by side (this / baseline, measured in this run; ratio < 1: this is faster):\n\n");
            out.append(
                    "| model | mode | first words this / baseline | ratio | whole turn this / baseline | ratio | "
                            + "first emotion this / baseline | ratio | cached input this / baseline | bark this / baseline | ratio |\n");
            out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
            for (String model : config.models()) {
                for (String mode : List.of("no tool", "tool")) {
                    Figures a = figures(groups.get(model + "|" + mode + "|this"));
                    Figures b = figures(groups.get(model + "|" + mode + "|baseline"));
                    out.append(String.format(
                            Locale.ROOT,
                            "| %s | %s | %s / %s | %s | %s / %s | %s | %s / %s | %s | %s / %s | %s / %s | %s |%n",
                            label(model),
                            mode,
                            secs2(a.firstWords()),
                            secs2(b.firstWords()),
                            ratio(a.firstWords(), b.firstWords()),
                            secs2(a.turn()),
                            secs2(b.turn()),
                            ratio(a.turn(), b.turn()),
                            secs2(a.emotion()),
                            secs2(b.emotion()),
                            ratio(a.emotion(), b.emotion()),
                            pct(a.cached()),
                            pct(b.cached()),
                            secs2(a.bark()),
                            secs2(b.bark()),
                            ratio(a.bark(), b.bark())));
                }
            }
        }
        out.append(String.format(
                Locale.ROOT,
                """

                Each row: one conversation of %d streamed npc/talk turns with Gorm the blacksmith over its own oam stdio child \
                (`java -jar JAR stdio --model FILE`, the default engine), then npc/bark %d times on the same NPC. "tool": the NPC \
                has one tool, check_inventory, named as groundingTool and answered by the harness at once with a fixed JSON output. \
                Times are from sending the request to the first npc/event emotion (first emotion), to the first lineDelta (first \
                words) and to the response (whole turn, bark); medians over turns 2..%d (turn 1 loads the model and the prompt), \
                every bark. cached input: the sum of usage.cachedInputTokens over the sum of usage.inputTokens of turns 2..%d. A \
                timed-out turn (over %s, then cancelled) counts as slower than any other ("∞"); a missing emotion or lineDelta too. \
                timeouts: of all the row's turns and barks, turn 1 included. fallbacks: turns 2..N whose reply was the fallback line. "issue 30, measured before": the issue's own table, measured \
                before its work on this machine (not in this run). Goals (issue 30): first words p50 ≤ 1.0 s without a tool and \
                ≤ 1.5 s with it, the whole turn no slower than before, cached ≥ 90 %% of the input from turn 2 on, npc/bark < 0.5 s. \
                The load average is the whole machine's: other programs' work slows every figure alike within a run, so compare \
                runs by their ratios. Per turn and bark: bench/target/npc.jsonl; the children's stderr: bench/target/logs/npc-*.log.
                """,
                config.turns(),
                config.barks(),
                config.turns(),
                config.turns(),
                config.turnTimeout() > 0 ? config.turnTimeout() + " s" : "--turn-timeout"));
        return out.toString();
    }

    private static String label(String model) {
        return model.equals("gemma") ? "Gemma 3 270M Q4_K_M" : "SmolLM2-135M-Instruct Q4_1";
    }

    /** Whether {@code value} meets a goal ({@code met}), or "no figure" where there is none (every turn timed out). */
    private static String met(double value, boolean met) {
        return Double.isNaN(value) ? "no figure" : met ? "met" : "not met";
    }

    private static String secs2(double seconds) {
        if (Double.isNaN(seconds)) {
            return "–";
        }
        return Double.isInfinite(seconds) ? "∞" : String.format(Locale.ROOT, "%.2f s", seconds);
    }

    private static String secs(Double ms) {
        return ms == null ? "–" : String.format(Locale.ROOT, "%.2f s", ms / 1000);
    }

    private static String pct(double share) {
        return Double.isNaN(share) ? "–" : String.format(Locale.ROOT, "%.0f %%", 100 * share);
    }

    private static String ratio(double a, double b) {
        if (Double.isNaN(a) || Double.isNaN(b) || Double.isInfinite(a) || Double.isInfinite(b) || b == 0) {
            return "–";
        }
        return String.format(Locale.ROOT, "%.2f", a / b);
    }

    /** The 1, 5 and 15 minute load averages of /proc/loadavg, or "unknown" off Linux. */
    private static String loadavg() {
        try {
            String[] parts = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return parts[0] + ", " + parts[1] + ", " + parts[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    /** The OAM_LLAMA_* and OAM_MODEL* variables the children inherit besides the threads the harness sets. */
    private String engineEnvironment() {
        List<String> set = new ArrayList<>();
        System.getenv().forEach((name, value) -> {
            if ((name.startsWith("OAM_LLAMA_") || name.startsWith(dev.oam.core.model.ModelSpec.MODEL_VARIABLE))
                    && !name.equals(dev.oam.model.llama.LlamaSettings.THREADS_VARIABLE)) {
                set.add(name + "=" + value);
            }
        });
        set.sort(null);
        return String.join(" ", set);
    }

    // ---------------------------------------------------------------- the wire

    /** Sends one request and returns the time it was flushed to the child. */
    private long send(String id, String method, String params) {
        child.send(
                "{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"" + method + "\",\"params\":" + params + "}");
        long at = System.nanoTime();
        child.flush();
        return at;
    }

    private void reply(JsonNode request, String result) {
        child.send("{\"jsonrpc\":\"2.0\",\"id\":" + Json.write(request.get("id")) + ",\"result\":" + result + "}");
        child.flush();
    }

    /** A request that must succeed (initialize, npc/create, npc/delete): its result, or the run stops. */
    private JsonNode call(String method, String params) throws Exception {
        String id = "c" + (++ids);
        long deadline = send(id, method, params) + TimeUnit.SECONDS.toNanos(config.turnTimeout());
        while (true) {
            Message m = next(deadline);
            if (m == null) {
                throw new BenchException(
                        method + " got no answer within " + config.turnTimeout() + " s" + child.diagnostics());
            }
            if (isResponse(m.json()) && id.equals(m.json().path("id").asText())) {
                if (m.json().has("error")) {
                    throw new TurnFailed(method + " answered with an error: "
                            + Json.write(m.json().get("error")));
                }
                return m.json().path("result");
            }
        }
    }

    /** The child's next message, or null once {@code deadline} (System.nanoTime()) has passed. */
    private Message next(long deadline) throws BenchException, InterruptedException {
        while (true) {
            String failure = child.failure();
            long left = deadline - System.nanoTime();
            Message m = inbox.poll(Math.max(0, Math.min(left, TimeUnit.SECONDS.toNanos(1))), TimeUnit.NANOSECONDS);
            if (m != null) {
                return m;
            }
            if (failure != null) {
                throw new BenchException("the child stopped: " + failure + child.diagnostics());
            }
            if (left <= 0) {
                return null;
            }
        }
    }

    private static boolean isResponse(JsonNode json) {
        return json.has("id") && !json.has("method");
    }

    private static double ms(long start, long at) {
        return (at - start) / 1e6;
    }

    private static String quote(String text) {
        return Json.write(Json.mapper().valueToTree(text));
    }
}
