package dev.oam.bench.eval;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.json.Json;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.LlamaServer;
import dev.oam.testing.RealModels;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;

/**
 * The evaluation (not a test): the fixed scenario set of {@code bench/eval/v1} (tool selection, decisions, NPC turns,
 * content generation) run on Gemma 3 270M twice, side by side in one run: on the embedded llama.cpp backend and on the
 * same file behind a real {@code llama-server} through the OpenAI backend. Each case runs on both backends one right
 * after the other, so load from other programs hits both alike. Every verdict is a rule a program applies to the
 * bridge's answer (the tool's name, argument values, schema validity, the option id, meta-talk, the fact the tool
 * returned); nothing is judged by a person or a model.
 *
 * <p>Timing: "turn" is from sending the request to the decision that is measured: for tool cases the first
 * {@code tool/call} (the turn is then cancelled, so the step after the tool is not timed) or the answer when no tool is
 * called; for the rest the response. "first token" is the first streamed output (text, a partial value, a line delta or
 * a tool call). Decode tokens/s is output tokens over the time after the first token, for completed, streamed turns;
 * tokens per turn are the turn's input and output tokens (not known for a cancelled tool turn).
 */
public final class EvalBench {
    private static final Duration WAIT = Duration.ofMinutes(10);
    private static final String INSTRUCTIONS = "You help the player in a fantasy town. When one of your tools fits the "
            + "player's request, call it with exactly the values the player gave. When none fits, answer in one short sentence.";

    record Config(
            Path root,
            String set,
            List<String> models,
            int limit,
            Map<String, Integer> sample,
            List<String> kinds,
            List<String> backends,
            int threads,
            int toolTokens,
            int contentTokens,
            Set<String> cases,
            Duration caseTimeout,
            Path gemmaTemplate,
            String split) {}

    /**
     * One case on one backend. v1 fills the first fourteen members (model "gemma" when absent from an old file); v2
     * adds the calls of the forced step, cleanliness, the fact, the longest string value and whether the case timed
     * out. {@code extra}: in persona (v1 NPC), player options that are player lines (v2 NPC), reasoning of 3 words or
     * more (v2 decisions), no string cut mid-word (v2 content).
     */
    record Outcome(
            String model,
            String kind,
            String backend,
            String mode,
            String id,
            boolean right,
            Boolean rightArgs,
            boolean valid,
            Boolean extra,
            double turnMs,
            Double firstMs,
            Integer inTokens,
            Integer outTokens,
            String note,
            Integer calls,
            Boolean oneCall,
            Boolean clean,
            Boolean namesFact,
            Integer longest,
            Boolean timeout) {}

    /** The case ran past its timeout; it was cancelled and counts as failed. */
    private static final class CaseTimeout extends RuntimeException {
        CaseTimeout() {
            super("timeout", null, false, false);
        }
    }

    private final Config config;
    private final List<Outcome> outcomes = new ArrayList<>();
    private final Map<String, String> specs = new LinkedHashMap<>();
    private InMemoryClient client;
    private PrintStream details;
    private int ids;
    private String model = "gemma";
    private Path modelFile;
    private LlamaServer server; // the running model's llama-server, when that backend is chosen
    private int serverDeaths;
    private long caseDeadline = Long.MAX_VALUE; // System.nanoTime() when the running case times out
    private String lastStreamed = "nothing"; // the running case's last streamed event, for a timeout's note

    private EvalBench(Config config) {
        this.config = config;
    }

    public static void main(String[] args) {
        Path root = Path.of(System.getProperty("oam.bench.root", "."))
                .toAbsolutePath()
                .normalize();
        String set = "v3";
        String split = "all";
        List<String> models = List.of("smollm2", "gemma");
        int caseTimeout = 120;
        Path gemmaTemplate = null;
        int limit = Integer.MAX_VALUE;
        List<String> kinds = List.of("tools", "decisions", "npc", "content", "talk");
        List<String> backends = List.of("llama", "llama-server");
        int threads = 2;
        int contentTokens = 160;
        Set<String> cases = Set.of();
        List<Path> reports = new ArrayList<>();
        Map<String, Integer> sample = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--limit" -> limit = Integer.parseInt(args[++i]);
                case "--set" -> set = args[++i];
                case "--split" -> split = args[++i];
                case "--models" -> models = List.of(args[++i].split(","));
                case "--case-timeout" -> caseTimeout = Integer.parseInt(args[++i]);
                case "--gemma-template" -> gemmaTemplate = Path.of(args[++i]);
                case "--sample" -> {
                    for (String part : args[++i].split(",")) {
                        String[] kv = part.split("=");
                        sample.put(kv[0], Integer.parseInt(kv[1]));
                    }
                }
                case "--kinds" -> kinds = List.of(args[++i].split(","));
                case "--backends" -> backends = List.of(args[++i].split(","));
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--content-tokens" -> contentTokens = Integer.parseInt(args[++i]);
                case "--cases" -> cases = Set.of(args[++i].split(","));
                case "--report" -> {
                    for (String file : args[++i].split(",")) {
                        reports.add(Path.of(file));
                    }
                }
                case "--help" -> {
                    System.out.println(
                            "usage: bench/run eval [--set v1|v2|v3] [--split all|tuning|held-out] [--models smollm2,gemma] [--limit N] "
                                    + "[--kinds tools,decisions,npc,content] [--backends llama,llama-server] [--threads N] [--content-tokens N] "
                                    + "[--cases ID,…] [--case-timeout S] [--gemma-template F.jinja] [--report F.jsonl,…]\n"
                                    + "  --set v1|v2|v3  the scenario set in bench/eval/ (default v3: v2's cases and more)\n"
                                    + "  --split all|tuning|held-out  the cases of one half (EvalRules.split: a hash of the id; "
                                    + "default all, the report has a row per half)\n"
                                    + "  --models smollm2,gemma  the models, each on every backend (default both; v1 was run on gemma)\n"
                                    + "  --kinds K,…  tools, decisions, npc, content, talk (v3); from v2 on also the tool kinds args, choice, none, after, fit (v3)\n"
                                    + "  --limit N    the first N cases of each kind (v2: of each tool kind too; default: all)\n"
                                    + "  --case-timeout S  v2: a case still running after S seconds is cancelled and fails (default 120)\n"
                                    + "  --gemma-template F  llama-server's chat template for Gemma (default: oam-testing's gemma-turns.jinja)\n"
                                    + "  --sample K=N,…  N cases of kind K spread evenly over its file (e.g. tools=16)\n"
                                    + "  --threads N  threads of both backends (default 2)\n"
                                    + "  --content-tokens N  maxResponseTokens of the content turns (default 160)\n"
                                    + "  --cases ID,…  only these case ids (of every kind chosen)\n"
                                    + "  --report F.jsonl,…  no run: the table of the outcomes in these files (bench/target/eval-v2.jsonl of runs)");
                    return;
                }
                default -> {
                    System.err.println("bench eval: unknown option " + args[i] + " (--help)");
                    System.exit(2);
                }
            }
        }
        int code = 1;
        try {
            if (!set.equals("v1") && !set.equals("v2") && !set.equals("v3")) {
                throw new IllegalArgumentException("--set is v1, v2 or v3, not " + set);
            }
            if (!List.of("all", "tuning", "held-out").contains(split)) {
                throw new IllegalArgumentException("--split is all, tuning or held-out, not " + split);
            }
            EvalBench bench = new EvalBench(new Config(
                    root,
                    set,
                    models,
                    limit,
                    sample,
                    kinds,
                    backends,
                    threads,
                    96,
                    contentTokens,
                    cases,
                    Duration.ofSeconds(caseTimeout),
                    gemmaTemplate,
                    split));
            if (!reports.isEmpty()) {
                bench.reportOnly(reports);
                return;
            }
            bench.run();
            code = 0;
        } catch (Exception e) {
            System.err.println("bench eval: " + e);
            e.printStackTrace(System.err);
        }
        System.exit(code); // the binding's native threads keep the JVM alive otherwise
    }

    private void run() throws Exception {
        Path set = config.root().resolve("bench/eval/" + config.set());
        long started = System.nanoTime();
        Files.createDirectories(config.root().resolve("bench/target"));
        details = new PrintStream(
                Files.newOutputStream(config.root().resolve("bench/target/eval-" + config.set() + ".jsonl")),
                true,
                StandardCharsets.UTF_8);
        try {
            client = InMemoryClient.connect(BridgeConfiguration.builder());
            call("initialize", "{\"protocolVersion\":\"1.0\"}");
            for (String name : config.models()) {
                runModel(set, name);
            }
        } finally {
            if (client != null) {
                client.endInput();
            }
            details.close();
        }
        double minutes = (System.nanoTime() - started) / 60e9;
        System.out.println(report(minutes));
    }

    /** Every chosen case of the set on one model, on each backend one right after the other. */
    private void runModel(Path set, String name) throws Exception {
        model = name;
        Path file = switch (name) {
            case "gemma" -> RealModels.gemma();
            case "smollm2" -> RealModels.smollm2();
            default -> throw new IllegalArgumentException("--models: smollm2 or gemma, not " + name);
        };
        modelFile = file;
        specs.clear();
        try {
            if (config.backends().contains("llama-server")) {
                startServer();
            }
            if (config.backends().contains("llama")) {
                specs.put(
                        "llama",
                        "{\"type\":\"llama\",\"path\":" + quote(file.toString()) + ",\"contextSize\":4096,\"threads\":"
                                + config.threads() + "}");
            }
            for (String kind : fileKinds()) {
                if (!Files.isRegularFile(set.resolve(kind + ".json"))) {
                    continue; // a kind of a later set
                }
                JsonNode cases = Json.parse(Files.readString(set.resolve(kind + ".json")));
                for (JsonNode c : chosen(kind, cases)) {
                    if (config.set().equals("v1")) {
                        runV1(kind, cases, c);
                    } else {
                        runV2(kind, cases, c);
                    }
                }
            }
        } finally {
            if (server != null) {
                server.close();
                server = null;
            }
        }
    }

    /**
     * Starts llama-server on the model being run. SmolLM2 has its own (ChatML) template: llama-server uses it with its
     * generic tool-call format, as a user gets it. The Gemma base file has none: Gemma's turns, as the real-server
     * tests give it (or --gemma-template).
     */
    private void startServer() throws IOException, InterruptedException {
        System.err.println("bench eval: starting llama-server on " + modelFile);
        boolean gemma = model.equals("gemma");
        server = gemma && config.gemmaTemplate() == null
                ? LlamaServer.start(RealModels.llamaServer(), modelFile, 4096, 1, config.threads())
                : LlamaServer.startWithTemplate(
                        RealModels.llamaServer(),
                        modelFile,
                        gemma ? config.gemmaTemplate() : null,
                        4096,
                        1,
                        config.threads());
        specs.put(
                "llama-server",
                "{\"type\":\"openai\",\"baseUrl\":\"" + server.baseUrl() + "\",\"model\":\""
                        + (gemma ? "gemma-3-270m" : "smollm2-135m-instruct") + "\",\"contextSize\":4096}");
    }

    /** A llama-server that stopped is a finding: its log is kept in bench/target/logs and a new one is started. */
    private void reviveServer() {
        if (server == null || server.isAlive()) {
            return;
        }
        try {
            Path log =
                    config.root().resolve("bench/target/logs/llama-server-" + model + "-" + (++serverDeaths) + ".log");
            Files.writeString(log, server.log(), StandardCharsets.UTF_8);
            System.err.println("bench eval: llama-server stopped (log: " + log + "); starting another");
            server.close();
            startServer();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The files the chosen kinds live in (v2's tool kinds are in tools.json). */
    private List<String> fileKinds() {
        List<String> files = new ArrayList<>();
        for (String kind : config.kinds()) {
            String file = TOOL_KINDS.contains(kind) ? "tools" : kind;
            if (!files.contains(file)) {
                files.add(file);
            }
        }
        return files;
    }

    private static final List<String> TOOL_KINDS = List.of("args", "choice", "none", "after", "fit");

    /** The cases of one file after --sample, --cases and --limit (v2 tools: --limit per tool kind). */
    private List<JsonNode> chosen(String kind, JsonNode file) {
        List<JsonNode> chosen = new ArrayList<>();
        file.path("cases").forEach(chosen::add);
        if (!config.split().equals("all")) {
            chosen = chosen.stream()
                    .filter(c -> EvalRules.split(c.path("id").asText()).equals(config.split()))
                    .toList();
        }
        if (kind.equals("tools") && !config.set().equals("v1")) {
            boolean all = config.kinds().contains("tools");
            chosen = chosen.stream()
                    .filter(c -> all || config.kinds().contains(c.path("kind").asText()))
                    .toList();
        }
        Integer spread = config.sample().get(kind);
        if (spread != null && spread < chosen.size()) {
            List<JsonNode> picked = new ArrayList<>();
            for (int k = 0; k < spread; k++) {
                picked.add(chosen.get((int) ((long) k * chosen.size() / spread)));
            }
            chosen = picked;
        }
        if (!config.cases().isEmpty()) {
            chosen = chosen.stream()
                    .filter(c -> config.cases().contains(c.path("id").asText()))
                    .toList();
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        List<JsonNode> limited = new ArrayList<>();
        for (JsonNode c : chosen) {
            String group = c.path("kind").asText(kind);
            if (counts.merge(group, 1, Integer::sum) <= config.limit()) {
                limited.add(c);
            }
        }
        return limited;
    }

    private void runV1(String kind, JsonNode file, JsonNode c) {
        switch (kind) {
            case "tools" -> {
                for (String mode : List.of("auto", "required")) {
                    if (mode.equals("required") && c.path("expect").path("tool").isNull()) {
                        continue; // no tool fits: only auto can answer right
                    }
                    for (String backend : specs.keySet()) {
                        record(toolCase(file, c, backend, mode));
                    }
                }
            }
            case "decisions" -> specs.keySet().forEach(b -> record(decision(c, b)));
            case "npc" -> specs.keySet().forEach(b -> record(npc(file, c, b)));
            case "content" -> specs.keySet().forEach(b -> record(content(c, b)));
            default -> throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    /** The table of outcomes recorded by earlier runs (one JSON object per line), for runs made in parts. */
    private void reportOnly(List<Path> files) throws IOException {
        for (Path file : files) {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    outcomes.add(Json.mapper().treeToValue(Json.parse(line), Outcome.class));
                }
            }
        }
        System.out.println(report(Double.NaN));
    }

    /** A v1 outcome, of the model being run. */
    private Outcome outcome(
            String kind,
            String backend,
            String mode,
            String id,
            boolean right,
            Boolean rightArgs,
            boolean valid,
            Boolean extra,
            double turnMs,
            Double firstMs,
            Integer inTokens,
            Integer outTokens,
            String note) {
        return new Outcome(
                model, kind, backend, mode, id, right, rightArgs, valid, extra, turnMs, firstMs, inTokens, outTokens,
                note, null, null, null, null, null, null);
    }

    private void record(Outcome outcome) {
        outcomes.add(outcome);
        details.println(Json.write(Json.mapper().valueToTree(outcome)));
        System.err.printf(
                Locale.ROOT,
                "bench eval: %-7s %-9s %-12s %-8s %s right=%s args=%s valid=%s calls=%s clean=%s fact=%s "
                        + "extra=%s %.1f s %s%n",
                outcome.model(),
                outcome.kind(),
                outcome.backend(),
                outcome.mode(),
                outcome.id(),
                outcome.right(),
                outcome.rightArgs(),
                outcome.valid(),
                outcome.calls(),
                outcome.clean(),
                outcome.namesFact(),
                outcome.extra(),
                outcome.turnMs() / 1000,
                outcome.note() == null ? "" : outcome.note());
    }

    // ---------------------------------------------------------------- the kinds

    private Outcome toolCase(JsonNode file, JsonNode c, String backend, String mode) {
        String session = "t" + (++ids);
        ArrayNode tools = Json.array();
        for (JsonNode name : c.path("tools")) {
            ObjectNode tool = Json.object();
            tool.put("name", name.asText());
            tool.setAll((ObjectNode) file.path("tools").path(name.asText()));
            tools.add(tool);
        }
        call(
                "session/create",
                "{\"session\":\"" + session + "\",\"instructions\":" + quote(INSTRUCTIONS) + ",\"model\":"
                        + specs.get(backend) + ",\"tools\":" + Json.write(tools) + ",\"options\":{\"toolChoice\":\""
                        + mode
                        + "\",\"maxToolRounds\":1,\"maxResponseTokens\":" + config.toolTokens()
                        + ",\"temperature\":0}}");
        String id = "r" + (++ids);
        long start = System.nanoTime();
        send(
                id,
                "session/respond",
                "{\"session\":\"" + session + "\",\"prompt\":"
                        + quote(c.path("prompt").asText()) + ",\"stream\":true}");
        Double first = null;
        JsonNode expect = c.path("expect");
        String expected =
                expect.path("tool").isNull() ? null : expect.path("tool").asText();
        while (true) {
            Timed m = next(x -> isFor(x, id)
                    || "tool/call".equals(x.message().path("method").asText()));
            if (first == null
                    && (isStreamed(m.message())
                            || "tool/call".equals(m.message().path("method").asText()))) {
                first = ms(start, m.at());
            }
            JsonNode message = m.message();
            if ("tool/call".equals(message.path("method").asText())) {
                double turn = ms(start, m.at());
                JsonNode call = message.path("params").path("call");
                String name = call.path("name").asText();
                JsonNode schema = file.path("tools").path(name).path("parameters");
                boolean valid = !schema.isMissingNode() && violation(schema, call.path("arguments")) == null;
                boolean right = name.equals(expected);
                Boolean args = right ? argumentsRight(expect.path("arguments"), call.path("arguments")) : null;
                send("x" + (++ids), "session/cancel", "{\"session\":\"" + session + "\"}");
                await(x -> isFor(x, id)); // the cancelled turn's error
                call("session/delete", "{\"session\":\"" + session + "\"}");
                return outcome(
                        "tools",
                        backend,
                        mode,
                        c.path("id").asText(),
                        right,
                        args,
                        valid,
                        null,
                        turn,
                        first,
                        null,
                        null,
                        name + " " + Json.write(call.path("arguments")));
            }
            if (isResponse(message)) {
                double turn = ms(start, m.at());
                call("session/delete", "{\"session\":\"" + session + "\"}");
                JsonNode result = message.path("result");
                if (message.has("error")) {
                    return outcome(
                            "tools",
                            backend,
                            mode,
                            c.path("id").asText(),
                            false,
                            null,
                            false,
                            null,
                            turn,
                            first,
                            null,
                            null,
                            errorNote(message.path("error")));
                }
                JsonNode usage = result.path("usage");
                return outcome(
                        "tools",
                        backend,
                        mode,
                        c.path("id").asText(),
                        expected == null,
                        null,
                        true,
                        null,
                        turn,
                        first,
                        usage.path("inputTokens").asInt(),
                        usage.path("outputTokens").asInt(),
                        "answered without a call");
            }
        }
    }

    /** Enum values and numbers equal, names contained (case-insensitive); every expected argument present. */
    static boolean argumentsRight(JsonNode expected, JsonNode actual) {
        for (Iterator<Map.Entry<String, JsonNode>> it = expected.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> rule = it.next();
            JsonNode value = actual.get(rule.getKey());
            if (value == null) {
                return false;
            }
            JsonNode equals = rule.getValue().get("equals");
            if (equals != null) {
                boolean same = equals.isNumber()
                        ? value.isNumber() && value.decimalValue().compareTo(equals.decimalValue()) == 0
                        : value.asText().equalsIgnoreCase(equals.asText());
                if (!same) {
                    return false;
                }
            }
            JsonNode has = rule.getValue().get("has"); // an array holding each word in some item
            if (has != null) {
                for (JsonNode word : has) {
                    boolean found = false;
                    for (JsonNode item : value) {
                        found |= item.asText()
                                .toLowerCase(Locale.ROOT)
                                .contains(word.asText().toLowerCase(Locale.ROOT));
                    }
                    if (!found) {
                        return false;
                    }
                }
            }
            JsonNode contains = rule.getValue().get("contains");
            if (contains != null
                    && !value.asText()
                            .toLowerCase(Locale.ROOT)
                            .contains(contains.asText().toLowerCase(Locale.ROOT))) {
                return false;
            }
        }
        return true;
    }

    private Outcome decision(JsonNode c, String backend) {
        ObjectNode params = Json.object();
        params.put("situation", c.path("situation").asText());
        params.set("options", c.path("options"));
        if (c.has("actor")) {
            params.set("actor", c.path("actor"));
        }
        params.put("temperature", 0);
        params.set("model", parse(specs.get(backend)));
        String id = "d" + (++ids);
        long start = System.nanoTime();
        send(id, "decision/decide", Json.write(params));
        Timed m = await(x -> isFor(x, id));
        double turn = ms(start, m.at());
        JsonNode result = m.message().path("result");
        if (m.message().has("error")) {
            return outcome(
                    "decisions",
                    backend,
                    "-",
                    c.path("id").asText(),
                    false,
                    null,
                    false,
                    null,
                    turn,
                    null,
                    null,
                    null,
                    errorNote(m.message().path("error")));
        }
        List<String> options = new ArrayList<>();
        c.path("options").forEach(o -> options.add(o.path("id").asText()));
        String chosen = result.path("optionID").asText();
        boolean valid = options.contains(chosen) && !result.path("isFallback").asBoolean(true);
        JsonNode usage = result.path("usage");
        return outcome(
                "decisions",
                backend,
                "-",
                c.path("id").asText(),
                valid && chosen.equals(c.path("right").asText()),
                null,
                valid,
                null,
                turn,
                null,
                usage.path("inputTokens").asInt(),
                usage.path("outputTokens").asInt(),
                chosen);
    }

    private Outcome npc(JsonNode file, JsonNode c, String backend) {
        String npc = "n" + (++ids);
        String toolName = c.path("tool").path("name").asText();
        call(
                "npc/create",
                "{\"npc\":\"" + npc + "\",\"persona\":" + Json.write(c.path("persona")) + ",\"tools\":["
                        + Json.write(c.path("tool")) + "],\"model\":" + specs.get(backend)
                        + ",\"options\":{\"groundingTool\":\"" + toolName
                        + "\",\"maxToolRounds\":1,\"playerOptionCount\":2,\"maximumResponseTokens\":128,\"temperature\":0}}");
        String id = "r" + (++ids);
        long start = System.nanoTime();
        send(
                id,
                "npc/talk",
                "{\"npc\":\"" + npc + "\",\"line\":" + quote(c.path("line").asText()) + ",\"stream\":true}");
        Double first = null;
        while (true) {
            Timed m = next(x -> isFor(x, id)
                    || "tool/call".equals(x.message().path("method").asText()));
            JsonNode message = m.message();
            if (first == null
                    && "npc/event".equals(message.path("method").asText())
                    && message.path("params")
                            .path("event")
                            .path("type")
                            .asText()
                            .equals("lineDelta")) {
                first = ms(start, m.at());
            }
            if ("tool/call".equals(message.path("method").asText())) {
                reply(message, "{\"output\":" + Json.write(c.path("output")) + "}");
                continue;
            }
            if (isResponse(message)) {
                double turn = ms(start, m.at());
                call("npc/delete", "{\"npc\":\"" + npc + "\"}");
                if (message.has("error")) {
                    return outcome(
                            "npc",
                            backend,
                            "-",
                            c.path("id").asText(),
                            false,
                            null,
                            false,
                            false,
                            turn,
                            first,
                            null,
                            null,
                            errorNote(message.path("error")));
                }
                JsonNode result = message.path("result");
                String line = result.path("line").asText();
                boolean valid = !result.path("isFallback").asBoolean(true) && !line.isBlank();
                String lower = line.toLowerCase(Locale.ROOT);
                boolean inPersona = valid;
                for (JsonNode phrase : file.path("meta_talk")) {
                    inPersona &= !lower.contains(phrase.asText());
                }
                boolean fact = valid && lower.contains(c.path("fact").asText().toLowerCase(Locale.ROOT));
                JsonNode usage = result.path("usage");
                return outcome(
                        "npc",
                        backend,
                        "-",
                        c.path("id").asText(),
                        fact,
                        null,
                        valid,
                        inPersona,
                        turn,
                        first,
                        usage.path("inputTokens").asInt(),
                        usage.path("outputTokens").asInt(),
                        line);
            }
        }
    }

    private Outcome content(JsonNode c, String backend) {
        String session = "c" + (++ids);
        call(
                "session/create",
                "{\"session\":\"" + session + "\",\"instructions\":\"You write content for a fantasy game.\","
                        + "\"model\":" + specs.get(backend) + ",\"options\":{\"maxResponseTokens\":"
                        + config.contentTokens()
                        + ",\"temperature\":0}}");
        String id = "r" + (++ids);
        long start = System.nanoTime();
        send(
                id,
                "session/respond",
                "{\"session\":\"" + session + "\",\"prompt\":"
                        + quote(c.path("prompt").asText()) + ",\"schema\":" + Json.write(c.path("schema"))
                        + ",\"stream\":true}");
        Double first = null;
        while (true) {
            Timed m = next(x -> isFor(x, id));
            if (first == null && isStreamed(m.message())) {
                first = ms(start, m.at());
            }
            if (isResponse(m.message())) {
                double turn = ms(start, m.at());
                call("session/delete", "{\"session\":\"" + session + "\"}");
                if (m.message().has("error")) {
                    return outcome(
                            "content",
                            backend,
                            "-",
                            c.path("id").asText(),
                            false,
                            null,
                            false,
                            null,
                            turn,
                            first,
                            null,
                            null,
                            errorNote(m.message().path("error")));
                }
                JsonNode result = m.message().path("result");
                JsonNode value = result.path("structured");
                boolean valid = violation(c.path("schema"), value) == null;
                String text = Json.write(value).toLowerCase(Locale.ROOT);
                boolean topic = false;
                for (JsonNode word : c.path("topic")) {
                    topic |= text.contains(word.asText().toLowerCase(Locale.ROOT));
                }
                JsonNode usage = result.path("usage");
                return outcome(
                        "content",
                        backend,
                        "-",
                        c.path("id").asText(),
                        valid && topic,
                        null,
                        valid,
                        null,
                        turn,
                        first,
                        usage.path("inputTokens").asInt(),
                        usage.path("outputTokens").asInt(),
                        Json.write(value));
            }
        }
    }

    // ---------------------------------------------------------------- v2

    private void runV2(String kind, JsonNode file, JsonNode c) {
        for (String backend : List.copyOf(specs.keySet())) {
            if (backend.equals("llama-server")) {
                reviveServer();
            }
            String caseKind = kind.equals("tools") ? c.path("kind").asText() : kind;
            long start = System.nanoTime();
            caseDeadline = start + config.caseTimeout().toNanos();
            Outcome outcome;
            try {
                outcome = switch (kind) {
                    case "tools" -> toolCaseV2(file, c, backend);
                    case "decisions" -> decisionV2(c, backend);
                    case "npc" -> npcV2(file, c, backend);
                    case "content" -> contentV2(c, backend);
                    case "talk" -> talkV3(c, backend);
                    default -> throw new IllegalArgumentException("unknown kind " + kind);
                };
            } catch (CaseTimeout timeout) {
                outcome = new Outcome(
                        model,
                        caseKind,
                        backend,
                        modeOf(caseKind),
                        c.path("id").asText(),
                        false,
                        null,
                        false,
                        null,
                        ms(start, System.nanoTime()),
                        null,
                        null,
                        null,
                        "timeout after " + config.caseTimeout().toSeconds() + " s; last " + "streamed: " + lastStreamed,
                        null,
                        null,
                        null,
                        null,
                        null,
                        true);
            } finally {
                caseDeadline = Long.MAX_VALUE;
                lastStreamed = "nothing";
            }
            record(outcome);
        }
    }

    private static String modeOf(String kind) {
        return switch (kind) {
            case "none", "fit" -> "auto";
            case "args", "choice", "after" -> "required";
            default -> "-";
        };
    }

    /**
     * A v2 tool case: the forced step's calls are counted (each answered with the case's output, or {"ok": true}) until
     * the next step starts; kind "after" then lets the turn finish and judges its answer, the others cancel it there.
     */
    private Outcome toolCaseV2(JsonNode file, JsonNode c, String backend) {
        String kind = c.path("kind").asText();
        String mode = modeOf(kind);
        String instructions = file.path("instructions").asText();
        String session = "t" + (++ids);
        ArrayNode tools = Json.array();
        for (JsonNode name : c.path("tools")) {
            ObjectNode tool = Json.object();
            tool.put("name", name.asText());
            tool.setAll((ObjectNode) file.path("tools").path(name.asText()));
            tools.add(tool);
        }
        call(
                "session/create",
                "{\"session\":\"" + session + "\",\"instructions\":" + quote(instructions) + ",\"model\":"
                        + specs.get(backend) + ",\"tools\":" + Json.write(tools) + ",\"options\":{\"toolChoice\":\""
                        + mode
                        + "\",\"maxToolRounds\":1,\"temperature\":0}}");
        String id = "r" + (++ids);
        long start = System.nanoTime();
        send(
                id,
                "session/respond",
                "{\"session\":\"" + session + "\",\"prompt\":"
                        + quote(c.path("prompt").asText()) + ",\"stream\":true}");
        JsonNode expect = c.path("expect");
        String expected =
                expect.path("tool").isNull() ? null : expect.path("tool").asText();
        String output = c.has("output") ? Json.write(c.path("output")) : "{\"ok\":true}";
        Double first = null;
        Double turn = null;
        JsonNode firstCall = null;
        int step = 0;
        int started = 0;
        int requested = 0;
        JsonNode response;
        try {
            while (true) {
                Timed m = next(x -> isFor(x, id) || isMethod(x, "tool/call") || isEvent(x, "modelStep"));
                JsonNode message = m.message();
                if (first == null && (isStreamed(message) || isMethod(m, "tool/call"))) {
                    first = ms(start, m.at());
                }
                if (isEvent(m, "modelStep")) {
                    step = message.path("params")
                            .path("event")
                            .path("step")
                            .path("index")
                            .asInt();
                    if (step >= 1 && !kind.equals("after")) {
                        send("x" + (++ids), "session/cancel", "{\"session\":\"" + session + "\"}");
                        response = await(x -> isFor(x, id)).message(); // the cancelled turn's error
                        break;
                    }
                } else if (isEvent(m, "toolCallStarted") && step == 0) {
                    started++;
                } else if (isMethod(m, "tool/call")) {
                    requested += step == 0 ? 1 : 0;
                    if (firstCall == null) {
                        firstCall = message.path("params").path("call");
                        turn = ms(start, m.at());
                    }
                    if (mode.equals("auto")) { // no tool fits: a call is the wrong answer; the turn ends here
                        send("x" + (++ids), "session/cancel", "{\"session\":\"" + session + "\"}");
                        response = await(x -> isFor(x, id)).message();
                        break;
                    }
                    reply(message, "{\"output\":" + output + "}");
                } else if (isResponse(message)) {
                    response = message;
                    break;
                }
            }
        } catch (CaseTimeout timeout) {
            send("x" + (++ids), "session/cancel", "{\"session\":\"" + session + "\"}");
            drain(id);
            call("session/delete", "{\"session\":\"" + session + "\"}");
            throw timeout;
        }
        double done = ms(start, System.nanoTime());
        call("session/delete", "{\"session\":\"" + session + "\"}");
        int calls = Math.max(started, requested);
        String caseId = c.path("id").asText();
        boolean completed = !response.has("error");
        JsonNode result = response.path("result");
        Integer in = completed ? result.path("usage").path("inputTokens").asInt() : null;
        Integer out = completed ? result.path("usage").path("outputTokens").asInt() : null;
        if (mode.equals("auto")) {
            if (firstCall != null) {
                // kind none: a call is the wrong answer; kind fit: the fitting tool with the right arguments is right
                String called = firstCall.path("name").asText();
                boolean fits = expected != null && called.equals(expected);
                JsonNode calledSchema = file.path("tools").path(called).path("parameters");
                return new Outcome(
                        model,
                        kind,
                        backend,
                        mode,
                        caseId,
                        fits,
                        fits ? argumentsRight(expect.path("arguments"), firstCall.path("arguments")) : null,
                        !calledSchema.isMissingNode() && violation(calledSchema, firstCall.path("arguments")) == null,
                        null,
                        turn,
                        first,
                        null,
                        null,
                        "called " + firstCall.path("name").asText() + " " + Json.write(firstCall.path("arguments")),
                        calls,
                        null,
                        null,
                        null,
                        null,
                        false);
            }
            if (!completed) {
                return new Outcome(
                        model,
                        kind,
                        backend,
                        mode,
                        caseId,
                        false,
                        null,
                        false,
                        null,
                        done,
                        first,
                        null,
                        null,
                        errorNote(response.path("error")),
                        0,
                        null,
                        null,
                        null,
                        null,
                        false);
            }
            String text = result.path("text").asText();
            return new Outcome(
                    model,
                    kind,
                    backend,
                    mode,
                    caseId,
                    expected == null, // kind fit: answering without the fitting tool is wrong
                    null,
                    true,
                    null,
                    done,
                    first,
                    in,
                    out,
                    text,
                    0,
                    null,
                    EvalRules.clean(text, instructions),
                    null,
                    null,
                    false);
        }
        if (firstCall == null) {
            String note = completed
                    ? "answered without a call: " + result.path("text").asText()
                    : "error " + response.path("error").path("code").asInt() + " "
                            + response.path("error").path("message").asText();
            return new Outcome(
                    model,
                    kind,
                    backend,
                    mode,
                    caseId,
                    false,
                    null,
                    false,
                    null,
                    done,
                    first,
                    in,
                    out,
                    note,
                    calls,
                    calls == 1,
                    null,
                    null,
                    null,
                    false);
        }
        String name = firstCall.path("name").asText();
        JsonNode schema = file.path("tools").path(name).path("parameters");
        boolean valid = !schema.isMissingNode() && violation(schema, firstCall.path("arguments")) == null;
        boolean right = name.equals(expected);
        Boolean args = right ? argumentsRight(expect.path("arguments"), firstCall.path("arguments")) : null;
        boolean clean = EvalRules.strings(firstCall.path("arguments")).stream()
                .allMatch(v -> EvalRules.protocolText(v, null) == null);
        String note = name + " " + Json.write(firstCall.path("arguments"));
        Boolean fact = null;
        if (kind.equals("after")) {
            if (!completed) {
                note += " | error " + response.path("error").path("code").asInt() + " "
                        + response.path("error").path("message").asText();
                clean = false;
            } else {
                String text = result.path("text").asText();
                note += " | " + text;
                clean &= EvalRules.clean(text, instructions);
                fact = EvalRules.namesFact(text, c.path("fact"));
            }
            turn = done; // an answered turn is timed to its answer
        }
        return new Outcome(
                model,
                kind,
                backend,
                mode,
                caseId,
                right,
                args,
                valid,
                null,
                turn,
                first,
                in,
                out,
                note,
                calls,
                calls == 1,
                clean,
                fact,
                null,
                false);
    }

    private Outcome decisionV2(JsonNode c, String backend) {
        ObjectNode params = Json.object();
        params.put("situation", c.path("situation").asText());
        params.set("options", c.path("options"));
        if (c.has("actor")) {
            params.set("actor", c.path("actor"));
        }
        params.put("temperature", 0);
        params.set("model", parse(specs.get(backend)));
        String id = "d" + (++ids);
        long start = System.nanoTime();
        send(id, "decision/decide", Json.write(params));
        Timed m = await(
                x -> isFor(x, id)); // no cancel for a decision: a timeout leaves it running, its answer is dropped
        double turn = ms(start, m.at());
        String caseId = c.path("id").asText();
        if (m.message().has("error")) {
            return new Outcome(
                    model,
                    "decisions",
                    backend,
                    "-",
                    caseId,
                    false,
                    null,
                    false,
                    null,
                    turn,
                    null,
                    null,
                    null,
                    errorNote(m.message().path("error")),
                    null,
                    null,
                    null,
                    null,
                    null,
                    false);
        }
        JsonNode result = m.message().path("result");
        List<String> options = new ArrayList<>();
        c.path("options").forEach(o -> options.add(o.path("id").asText()));
        String chosen = result.path("optionID").asText();
        boolean valid = options.contains(chosen) && !result.path("isFallback").asBoolean(true);
        String reasoning = result.path("reasoning").asText();
        JsonNode usage = result.path("usage");
        return new Outcome(
                model,
                "decisions",
                backend,
                "-",
                caseId,
                valid && chosen.equals(c.path("right").asText()),
                null,
                valid,
                EvalRules.words(reasoning) >= 3,
                turn,
                null,
                usage.path("inputTokens").asInt(),
                usage.path("outputTokens").asInt(),
                chosen + " | " + reasoning,
                null,
                null,
                EvalRules.protocolText(reasoning, null) == null,
                null,
                reasoning.length(),
                false);
    }

    private Outcome npcV2(JsonNode file, JsonNode c, String backend) {
        String npc = "n" + (++ids);
        String toolName = c.path("tool").path("name").asText();
        call(
                "npc/create",
                "{\"npc\":\"" + npc + "\",\"persona\":" + Json.write(c.path("persona")) + ",\"tools\":["
                        + Json.write(c.path("tool")) + "],\"model\":" + specs.get(backend)
                        + ",\"options\":{\"groundingTool\":\"" + toolName
                        + "\",\"maxToolRounds\":1,\"playerOptionCount\":3,\"temperature\":0}}");
        String id = "r" + (++ids);
        long start = System.nanoTime();
        send(
                id,
                "npc/talk",
                "{\"npc\":\"" + npc + "\",\"line\":" + quote(c.path("line").asText()) + ",\"stream\":true}");
        Double first = null;
        JsonNode message;
        try {
            while (true) {
                Timed m = next(x -> isFor(x, id) || isMethod(x, "tool/call"));
                message = m.message();
                if (first == null && isEvent(m, "lineDelta")) {
                    first = ms(start, m.at());
                }
                if (isMethod(m, "tool/call")) {
                    reply(message, "{\"output\":" + Json.write(c.path("output")) + "}");
                } else if (isResponse(message)) {
                    break;
                }
            }
        } catch (CaseTimeout timeout) {
            send("x" + (++ids), "npc/cancel", "{\"npc\":\"" + npc + "\"}");
            drain(id);
            call("npc/delete", "{\"npc\":\"" + npc + "\"}");
            throw timeout;
        }
        double turn = ms(start, System.nanoTime());
        call("npc/delete", "{\"npc\":\"" + npc + "\"}");
        String caseId = c.path("id").asText();
        if (message.has("error")) {
            return new Outcome(
                    model,
                    "npc",
                    backend,
                    "-",
                    caseId,
                    false,
                    null,
                    false,
                    false,
                    turn,
                    first,
                    null,
                    null,
                    "error " + message.path("error").path("code").asInt() + " "
                            + message.path("error").path("message").asText(),
                    null,
                    null,
                    false,
                    false,
                    null,
                    false);
        }
        JsonNode result = message.path("result");
        String line = result.path("line").asText();
        boolean valid = !result.path("isFallback").asBoolean(true) && !line.isBlank();
        Set<String> properties = new java.util.HashSet<>();
        file.path("property_names").forEach(p -> properties.add(p.asText().toLowerCase(Locale.ROOT)));
        boolean clean =
                EvalRules.clean(line, null) && !properties.contains(line.strip().toLowerCase(Locale.ROOT));
        for (JsonNode word : file.path("schema_words")) {
            clean &= !line.contains(word.asText());
        }
        clean &= !containsAny(line, file.path("schema_text"));
        boolean options = result.path("playerOptions").size() > 0;
        for (JsonNode option : result.path("playerOptions")) {
            String text = option.asText();
            boolean ok = EvalRules.words(text) >= 3
                    && EvalRules.protocolText(text, null) == null
                    && !properties.contains(text.strip().toLowerCase(Locale.ROOT));
            for (JsonNode word : file.path("schema_words")) {
                ok &= !text.contains(word.asText());
            }
            ok &= !containsAny(text, file.path("schema_text"));
            options &= ok;
            clean &= EvalRules.protocolText(text, null) == null;
        }
        boolean fact = valid && EvalRules.namesFact(line, c.path("fact"));
        JsonNode usage = result.path("usage");
        return new Outcome(
                model,
                "npc",
                backend,
                "-",
                caseId,
                fact,
                null,
                valid,
                options,
                turn,
                first,
                usage.path("inputTokens").asInt(),
                usage.path("outputTokens").asInt(),
                line + " | " + Json.write(result.path("playerOptions")),
                null,
                null,
                clean,
                fact,
                line.length(),
                false);
    }

    private Outcome contentV2(JsonNode c, String backend) {
        String session = "c" + (++ids);
        String bound = c.has("maxResponseTokens")
                ? ",\"maxResponseTokens\":" + c.path("maxResponseTokens").asInt()
                : "";
        call(
                "session/create",
                "{\"session\":\"" + session + "\",\"instructions\":\"You write content for a fantasy game.\","
                        + "\"model\":" + specs.get(backend) + ",\"options\":{\"temperature\":0" + bound + "}}");
        String id = "r" + (++ids);
        long start = System.nanoTime();
        send(
                id,
                "session/respond",
                "{\"session\":\"" + session + "\",\"prompt\":"
                        + quote(c.path("prompt").asText()) + ",\"schema\":" + Json.write(c.path("schema"))
                        + ",\"stream\":true}");
        Double first = null;
        JsonNode message;
        try {
            while (true) {
                Timed m = next(x -> isFor(x, id));
                if (first == null && isStreamed(m.message())) {
                    first = ms(start, m.at());
                }
                if (isResponse(m.message())) {
                    message = m.message();
                    break;
                }
            }
        } catch (CaseTimeout timeout) {
            send("x" + (++ids), "session/cancel", "{\"session\":\"" + session + "\"}");
            drain(id);
            call("session/delete", "{\"session\":\"" + session + "\"}");
            throw timeout;
        }
        double turn = ms(start, System.nanoTime());
        call("session/delete", "{\"session\":\"" + session + "\"}");
        String caseId = c.path("id").asText();
        if (message.has("error")) {
            return new Outcome(
                    model,
                    "content",
                    backend,
                    "-",
                    caseId,
                    false,
                    null,
                    false,
                    null,
                    turn,
                    first,
                    null,
                    null,
                    "error " + message.path("error").path("code").asInt() + " "
                            + message.path("error").path("message").asText(),
                    null,
                    null,
                    null,
                    null,
                    null,
                    false);
        }
        JsonNode result = message.path("result");
        JsonNode value = result.path("structured");
        boolean valid = violation(c.path("schema"), value) == null;
        List<String> strings = EvalRules.strings(value);
        boolean uncut = strings.stream().noneMatch(EvalRules::cut);
        boolean clean = strings.stream().allMatch(v -> EvalRules.protocolText(v, null) == null);
        int longest = strings.stream().mapToInt(String::length).max().orElse(0);
        String text = Json.write(value).toLowerCase(Locale.ROOT);
        boolean topic = false;
        for (JsonNode word : c.path("topic")) {
            topic |= text.contains(word.asText().toLowerCase(Locale.ROOT));
        }
        JsonNode usage = result.path("usage");
        return new Outcome(
                model,
                "content",
                backend,
                "-",
                caseId,
                valid && topic,
                null,
                valid,
                uncut,
                turn,
                first,
                usage.path("inputTokens").asInt(),
                usage.path("outputTokens").asInt(),
                Json.write(value),
                null,
                null,
                clean,
                null,
                longest,
                false);
    }

    /**
     * A v3 conversation: the case's NPCs (over its world when it has one, {@code read_world_state} forced as the
     * grounding tool) created in one bridge on the backend, its turns in order, then its barks. Judged per the file's
     * {@code about}: every turn valid and clean, each fact named by its turn, no secret told; {@code extra}: no turn
     * repeats itself or an earlier line of its NPC.
     */
    private Outcome talkV3(JsonNode c, String backend) {
        String caseId = c.path("id").asText();
        String prefix = "v" + (++ids) + "-";
        String world = null;
        if (c.has("world")) {
            world = prefix + "world";
            call("world/create", "{\"world\":\"" + world + "\",\"state\":" + Json.write(c.path("world")) + "}");
        }
        List<String> created = new ArrayList<>();
        long start = System.nanoTime();
        Double first = null;
        boolean valid = true;
        boolean clean = true;
        boolean facts = true;
        boolean hasFacts = false;
        boolean secretKept = true;
        boolean repeats = false;
        int in = 0;
        int out = 0;
        Map<String, List<String>> lines = new LinkedHashMap<>();
        StringBuilder note = new StringBuilder();
        try {
            for (Iterator<Map.Entry<String, JsonNode>> it =
                            c.path("npcs").properties().iterator();
                    it.hasNext(); ) {
                Map.Entry<String, JsonNode> npc = it.next();
                JsonNode spec = npc.getValue();
                com.fasterxml.jackson.databind.node.ObjectNode options = Json.object();
                options.put("temperature", 0);
                options.put("compactAfterTurns", 0);
                if (spec.path("world").asBoolean(false)) {
                    options.put("groundingTool", "read_world_state");
                }
                spec.path("options").properties().forEach(e -> options.set(e.getKey(), e.getValue()));
                call(
                        "npc/create",
                        "{\"npc\":\"" + prefix + npc.getKey() + "\",\"persona\":" + Json.write(spec.path("persona"))
                                + (spec.path("world").asBoolean(false) ? ",\"world\":\"" + world + "\"" : "")
                                + ",\"model\":" + specs.get(backend) + ",\"options\":" + Json.write(options) + "}");
                created.add(prefix + npc.getKey());
            }
            for (JsonNode turn : c.path("turns")) {
                String npc = turn.path("npc").asText();
                String id = "r" + (++ids);
                long turnStart = System.nanoTime();
                send(
                        id,
                        "npc/talk",
                        "{\"npc\":\"" + prefix + npc + "\",\"line\":"
                                + quote(turn.path("line").asText()) + ",\"stream\":true}");
                JsonNode message;
                while (true) {
                    Timed m = next(x -> isFor(x, id) || isMethod(x, "tool/call"));
                    message = m.message();
                    if (first == null && isEvent(m, "lineDelta")) {
                        first = ms(turnStart, m.at());
                    }
                    if (isResponse(message)) {
                        break;
                    }
                }
                String said;
                if (message.has("error")) {
                    valid = false;
                    said = "error " + message.path("error").path("code").asInt() + " "
                            + message.path("error").path("message").asText();
                    note.append(npc).append(": ").append(said).append(" | ");
                    if (turn.has("fact")) {
                        hasFacts = true;
                        facts = false;
                    }
                    continue;
                }
                JsonNode result = message.path("result");
                said = result.path("line").asText();
                in += result.path("usage").path("inputTokens").asInt();
                out += result.path("usage").path("outputTokens").asInt();
                boolean fallback = result.path("isFallback").asBoolean(true) || said.isBlank();
                valid &= !fallback;
                clean &= EvalRules.clean(said, null);
                if (turn.has("fact")) {
                    hasFacts = true;
                    facts &= !fallback && EvalRules.namesFact(said, turn.path("fact"));
                }
                for (JsonNode other : c.path("turns")) {
                    if (other.has("avoid") && EvalRules.namesFact(said, other.path("avoid"))) {
                        secretKept = false;
                    }
                }
                List<String> before = lines.computeIfAbsent(npc, k -> new ArrayList<>());
                repeats |= !fallback && EvalRules.repeats(said, before);
                before.add(said);
                note.append(npc)
                        .append(fallback ? " (fallback" + result.path("warnings") + ")" : "")
                        .append(": ")
                        .append(said)
                        .append(" | ");
            }
            for (JsonNode bark : c.path("barks")) {
                String npc = bark.path("npc").asText();
                JsonNode result = call(
                        "npc/bark",
                        "{\"npc\":\"" + prefix + npc + "\",\"situation\":"
                                + quote(bark.path("situation").asText()) + "}");
                String said = result.path("line").asText();
                valid &= !said.isBlank();
                clean &= EvalRules.clean(said, null)
                        && !said.toLowerCase(Locale.ROOT).contains("situation");
                List<String> before = lines.computeIfAbsent(npc, k -> new ArrayList<>());
                repeats |= EvalRules.repeats(said, before);
                before.add(said);
                note.append(npc).append(" (bark): ").append(said).append(" | ");
            }
        } catch (CaseTimeout timeout) {
            for (String npc : created) {
                send("x" + (++ids), "npc/cancel", "{\"npc\":\"" + npc + "\"}");
            }
            throw timeout;
        } catch (IllegalStateException failed) { // a bark's error: recorded, the case goes on to its verdict
            valid = false;
            note.append(failed.getMessage());
        } finally {
            caseDeadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            for (String npc : created) {
                call("npc/delete", "{\"npc\":\"" + npc + "\"}");
            }
            if (world != null) {
                call("world/delete", "{\"world\":\"" + world + "\"}");
            }
        }
        double turnMs = ms(start, System.nanoTime())
                / Math.max(1, c.path("turns").size() + c.path("barks").size());
        return new Outcome(
                model,
                "talk",
                backend,
                "-",
                caseId,
                valid && facts && secretKept,
                null,
                valid,
                !repeats,
                turnMs,
                first,
                in,
                out,
                (secretKept ? "" : "told the secret | ") + note,
                null,
                null,
                clean,
                hasFacts ? facts : null,
                null,
                false);
    }

    /**
     * Whether {@code text} contains one of {@code phrases} (case-insensitive): the reply schema's descriptions read
     * back.
     */
    private static boolean containsAny(String text, JsonNode phrases) {
        return EvalRules.namesFact(text, phrases);
    }

    /** After a cancel: the request's answer (an error), waited for up to a minute beyond the case's timeout. */
    private void drain(String id) {
        caseDeadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
        try {
            await(x -> isFor(x, id));
        } catch (CaseTimeout again) {
            System.err.println("bench eval: request " + id + " did not end within a minute of its cancel");
        }
    }

    private static String violation(JsonNode schema, JsonNode value) {
        try {
            return GenerationSchema.convert(schema, "eval")
                    .firstViolation(value)
                    .orElse(null);
        } catch (Exception e) {
            return "schema: " + e.getMessage();
        }
    }

    // ---------------------------------------------------------------- the report

    private String report(double minutes) {
        StringBuilder out = new StringBuilder();
        String set = config.set();
        out.append(
                Double.isNaN(minutes)
                        ? String.format(
                                Locale.ROOT,
                                "oam eval %s, %d turns (from earlier runs' outcomes)%n%n",
                                set,
                                outcomes.size())
                        : String.format(
                                Locale.ROOT,
                                "oam eval %s on %s, %d threads, %.1f minutes, %d turns%n%n",
                                set,
                                String.join(" and ", config.models()),
                                config.threads(),
                                minutes,
                                outcomes.size()));
        out.append(
                "| split | model | kind | backend | toolChoice | cases | right | right args | one call | clean | names fact | valid | other | "
                        + "timeouts | turn p50 / p95 s | first token p50 s | decode tok/s | tokens in / out per turn |\n");
        out.append("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        Map<String, List<Outcome>> groups = new LinkedHashMap<>();
        for (Outcome o : outcomes) {
            String modelName = o.model() == null ? "gemma" : o.model();
            groups.computeIfAbsent(
                            EvalRules.split(o.id()) + "|" + modelName + "|" + o.kind() + "|" + o.backend() + "|"
                                    + o.mode(),
                            k -> new ArrayList<>())
                    .add(o);
        }
        // the tuning half's rows first, then the held-out half's; each half's in the order the cases ran
        List<Map.Entry<String, List<Outcome>>> ordered = new ArrayList<>(groups.entrySet());
        ordered.sort(java.util.Comparator.comparing(e -> e.getKey().startsWith("held-out")));
        for (Map.Entry<String, List<Outcome>> group : ordered) {
            String[] key = group.getKey().split("\\|");
            List<Outcome> list = group.getValue();
            List<Double> turns = list.stream().map(Outcome::turnMs).toList();
            List<Double> firsts =
                    list.stream().map(Outcome::firstMs).filter(x -> x != null).toList();
            List<Double> rates = new ArrayList<>();
            List<Double> ins = new ArrayList<>();
            List<Double> outs = new ArrayList<>();
            for (Outcome o : list) {
                if (o.outTokens() != null) {
                    ins.add((double) o.inTokens());
                    outs.add((double) o.outTokens());
                    if (o.firstMs() != null && o.outTokens() > 1 && o.turnMs() > o.firstMs()) {
                        rates.add((o.outTokens() - 1) / ((o.turnMs() - o.firstMs()) / 1000));
                    }
                }
            }
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %d | %s / %s | %s | %s | %s / %s |%n",
                    key[0],
                    key[1],
                    label(key[2]),
                    key[3],
                    key[4],
                    list.size(),
                    pct(list.stream().filter(Outcome::right).count(), list.size()),
                    share(list, Outcome::rightArgs),
                    share(list, Outcome::oneCall),
                    share(list, Outcome::clean),
                    share(list, Outcome::namesFact),
                    pct(list.stream().filter(Outcome::valid).count(), list.size()),
                    share(list, Outcome::extra),
                    list.stream().filter(o -> Boolean.TRUE.equals(o.timeout())).count(),
                    seconds(percentile(turns, 50)),
                    seconds(percentile(turns, 95)),
                    firsts.isEmpty() ? "–" : seconds(percentile(firsts, 50)),
                    rates.isEmpty() ? "–" : String.format(Locale.ROOT, "%.1f", percentile(rates, 50)),
                    ins.isEmpty() ? "–" : String.format(Locale.ROOT, "%.0f", percentile(ins, 50)),
                    outs.isEmpty() ? "–" : String.format(Locale.ROOT, "%.0f", percentile(outs, 50))));
        }
        // Overall: of each half, model and backend, the cases right (every kind counts one per case).
        out.append("\n| split | model | backend | cases | right |\n|---|---|---|---:|---:|\n");
        Map<String, long[]> totals =
                new java.util.TreeMap<>(java.util.Comparator.comparing((String k) -> k.startsWith("held-out"))
                        .thenComparing(k -> k));
        for (Outcome o : outcomes) {
            long[] t = totals.computeIfAbsent(
                    EvalRules.split(o.id()) + "|" + (o.model() == null ? "gemma" : o.model()) + "|" + o.backend(),
                    k -> new long[2]);
            t[0]++;
            t[1] += o.right() ? 1 : 0;
        }
        totals.forEach((k, t) -> {
            String[] key = k.split("\\|");
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %d | %d (%s) |%n",
                    key[0],
                    key[1],
                    key[2],
                    t[0],
                    t[1],
                    pct(t[1], t[0])));
        });
        out.append("""

                right: the expected tool called (none: an answer without a call); decisions the right option; NPC the line names \
                the fact the tool returned; content valid and on topic. right args: of the right calls, the arguments carry the \
                prompt's values. one call: of the forced steps that called, exactly one call. clean: no protocol text (tool_calls, \
                {", "name":, Output of, chat markers, U+FFFD, instructions read back) in the answer, line, options, reasoning, \
                argument or content strings, and (answers, lines) some words; NPC also no schema words in the line. names fact: \
                the answer after the tool round (after) or the line (NPC) names the tool output's fact. valid: arguments fit the \
                schema / an offered option without fallback / a non-fallback line / the value fits the schema. other: NPC player \
                options are player lines (3+ words, no schema words or property names); decisions reasoning of 3+ words; content \
                no string cut mid-word; NPC conversations no repetition (v1 NPC: in persona). NPC conversation (v3): right = every \
                turn valid, each fact named, no secret told; turn time per turn. A share is of the outcomes that have the measure; a timed-out case \
                fails and has none. Medians for tokens and decode rate; details per case in bench/target/eval-%s.jsonl.
                """.formatted(set));
        return out.toString();
    }

    /** The share of TRUE among the outcomes that have the measure, or "–" when none has it. */
    private static String share(List<Outcome> list, java.util.function.Function<Outcome, Boolean> measure) {
        long with = list.stream().filter(o -> measure.apply(o) != null).count();
        return with == 0
                ? "–"
                : pct(
                        list.stream()
                                .filter(o -> Boolean.TRUE.equals(measure.apply(o)))
                                .count(),
                        with);
    }

    private static String label(String kind) {
        return switch (kind) {
            case "tools" -> "tool selection";
            case "args" -> "tool args";
            case "choice" -> "one of four";
            case "none" -> "no tool fits";
            case "after" -> "after a tool";
            case "decisions" -> "decision";
            case "npc" -> "NPC turn";
            case "fit" -> "a tool fits";
            case "talk" -> "NPC conversation";
            default -> "content";
        };
    }

    private static String pct(long part, long whole) {
        return whole == 0 ? "–" : Math.round(100.0 * part / whole) + " %";
    }

    private static String seconds(double ms) {
        return String.format(Locale.ROOT, "%.1f", ms / 1000);
    }

    /** The nearest-rank {@code p}th percentile of {@code values}. */
    public static double percentile(List<Double> values, int p) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    // ---------------------------------------------------------------- the wire

    private record Timed(long at, JsonNode message) {}

    private void send(String id, String method, String params) {
        client.send(
                ("{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"" + method + "\",\"params\":" + params + "}")
                        .getBytes(StandardCharsets.UTF_8));
    }

    private void reply(JsonNode request, String result) {
        client.send(("{\"jsonrpc\":\"2.0\",\"id\":" + Json.write(request.get("id")) + ",\"result\":" + result + "}")
                .getBytes(StandardCharsets.UTF_8));
    }

    private JsonNode call(String method, String params) {
        String id = "c" + (++ids);
        send(id, method, params);
        JsonNode response = await(x -> isFor(x, id)).message();
        if (response.has("error")) {
            throw new IllegalStateException(method + " failed: " + Json.write(response.get("error")));
        }
        return response.path("result");
    }

    /** The next message matching {@code wanted}, or streamed output (for the first-token time); others are dropped. */
    private Timed next(Predicate<Timed> wanted) {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (true) {
            long now = System.nanoTime();
            boolean bounded = caseDeadline != Long.MAX_VALUE;
            if (bounded && now - caseDeadline >= 0) {
                throw new CaseTimeout();
            }
            long left = bounded ? Math.min(deadline - now, caseDeadline - now) : deadline - now;
            if (deadline - now <= 0) {
                throw new IllegalStateException("no answer within " + WAIT.toMinutes() + " minutes");
            }
            JsonNode message;
            try {
                message = client.poll(Duration.ofNanos(left));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted", e);
            }
            if (message == null) {
                continue;
            }
            Timed timed = new Timed(System.nanoTime(), message);
            if (isStreamed(message)) {
                String event = Json.write(message.path("params").path("event"));
                lastStreamed = event.length() > 300
                        ? event.substring(0, 150) + "…" + event.substring(event.length() - 150)
                        : event;
            }
            if (wanted.test(timed) || isStreamed(message)) {
                return timed;
            }
        }
    }

    /** The next message matching {@code wanted}, skipping everything else. */
    private Timed await(Predicate<Timed> wanted) {
        while (true) {
            Timed timed = next(wanted);
            if (wanted.test(timed)) {
                return timed;
            }
        }
    }

    private static boolean isFor(Timed timed, String id) {
        return isResponse(timed.message())
                && id.equals(timed.message().path("id").asText());
    }

    private static boolean isMethod(Timed timed, String method) {
        return method.equals(timed.message().path("method").asText());
    }

    /** A session or NPC event of this type. */
    private static boolean isEvent(Timed timed, String type) {
        String method = timed.message().path("method").asText();
        return (method.equals("session/event") || method.equals("npc/event"))
                && type.equals(timed.message()
                        .path("params")
                        .path("event")
                        .path("type")
                        .asText());
    }

    private static boolean isResponse(JsonNode message) {
        return message.has("id") && !message.has("method");
    }

    /**
     * Streamed output: text, a partial value, a line delta or a tool call starting (not the modelStep announcement).
     */
    private static boolean isStreamed(JsonNode message) {
        String method = message.path("method").asText();
        if (!method.equals("session/event") && !method.equals("npc/event")) {
            return false;
        }
        String type = message.path("params").path("event").path("type").asText();
        return type.equals("text")
                || type.equals("partial")
                || type.equals("lineDelta")
                || type.equals("toolCallStarted");
    }

    private static double ms(long start, long at) {
        return (at - start) / 1e6;
    }

    private static String quote(String text) {
        return Json.write(Json.mapper().valueToTree(text));
    }

    private static JsonNode parse(String json) {
        try {
            return Json.parse(json);
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /** An error answer as a case's note: its code and message ("error -32012: The model's output is …"). */
    static String errorNote(JsonNode error) {
        String message = error.path("message").asText("");
        return "error " + error.path("code").asInt() + (message.isEmpty() ? "" : ": " + message);
    }
}
