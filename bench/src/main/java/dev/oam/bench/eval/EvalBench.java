package dev.oam.bench.eval;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.json.Json;
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
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

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
 *
 * <p>This class parses the options and runs a set (models, llama-server, one case on each backend after the other, each
 * outcome recorded); the rest lives beside it: {@link EvalConfig} (the options), {@link EvalCases} (which cases run),
 * {@link V1Kinds}, {@link V2Kinds} and {@link TalkKinds} (one case on one backend), {@link EvalWire} (the in-process
 * bridge connection), {@link EvalRules} (the scoring rules), {@link Outcome} and {@link EvalReport} (the tables).
 */
public final class EvalBench {
    private final EvalConfig config;
    private final List<Outcome> outcomes = new ArrayList<>();
    private final Map<String, String> specs = new LinkedHashMap<>();
    private InMemoryClient client;
    private EvalWire wire;
    private PrintStream details;
    private String model = "gemma";
    private Path modelFile;
    private LlamaServer server; // the running model's llama-server, when that backend is chosen
    private int serverDeaths;
    private V1Kinds v1;
    private V2Kinds v2;
    private TalkKinds talk;

    private EvalBench(EvalConfig config) {
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
            EvalBench bench = new EvalBench(new EvalConfig(
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
            wire = new EvalWire(client);
            wire.call("initialize", "{\"protocolVersion\":\"1.0\"}");
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
        System.out.println(EvalReport.report(config, outcomes, minutes));
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
        v1 = new V1Kinds(config, wire, specs, name);
        v2 = new V2Kinds(config, wire, specs, name);
        talk = new TalkKinds(config, wire, specs, name);
        specs.clear();
        try {
            if (config.backends().contains("llama-server")) {
                startServer();
            }
            if (config.backends().contains("llama")) {
                specs.put(
                        "llama",
                        "{\"type\":\"llama\",\"path\":" + EvalWire.quote(file.toString())
                                + ",\"contextSize\":4096,\"threads\":" + config.threads() + "}");
            }
            for (String kind : EvalCases.fileKinds(config)) {
                if (!Files.isRegularFile(set.resolve(kind + ".json"))) {
                    continue; // a kind of a later set
                }
                JsonNode cases = Json.parse(Files.readString(set.resolve(kind + ".json")));
                for (JsonNode c : EvalCases.chosen(config, kind, cases)) {
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

    private void runV1(String kind, JsonNode file, JsonNode c) {
        switch (kind) {
            case "tools" -> {
                for (String mode : List.of("auto", "required")) {
                    if (mode.equals("required") && c.path("expect").path("tool").isNull()) {
                        continue; // no tool fits: only auto can answer right
                    }
                    for (String backend : specs.keySet()) {
                        record(v1.toolCase(file, c, backend, mode));
                    }
                }
            }
            case "decisions" -> specs.keySet().forEach(b -> record(v1.decision(c, b)));
            case "npc" -> specs.keySet().forEach(b -> record(v1.npc(file, c, b)));
            case "content" -> specs.keySet().forEach(b -> record(v1.content(c, b)));
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
        System.out.println(EvalReport.report(config, outcomes, Double.NaN));
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

    private void runV2(String kind, JsonNode file, JsonNode c) {
        for (String backend : List.copyOf(specs.keySet())) {
            if (backend.equals("llama-server")) {
                reviveServer();
            }
            String caseKind = kind.equals("tools") ? c.path("kind").asText() : kind;
            long start = System.nanoTime();
            wire.caseDeadline = start + config.caseTimeout().toNanos();
            Outcome outcome;
            try {
                outcome = switch (kind) {
                    case "tools" -> v2.toolCaseV2(file, c, backend);
                    case "decisions" -> v2.decisionV2(c, backend);
                    case "npc" -> v2.npcV2(file, c, backend);
                    case "content" -> v2.contentV2(c, backend);
                    case "talk" -> talk.talkV3(c, backend);
                    default -> throw new IllegalArgumentException("unknown kind " + kind);
                };
            } catch (EvalWire.CaseTimeout timeout) {
                outcome = new Outcome(
                        model,
                        caseKind,
                        backend,
                        V2Kinds.modeOf(caseKind),
                        c.path("id").asText(),
                        false,
                        null,
                        false,
                        null,
                        EvalWire.ms(start, System.nanoTime()),
                        null,
                        null,
                        null,
                        "timeout after " + config.caseTimeout().toSeconds() + " s; last " + "streamed: "
                                + wire.lastStreamed,
                        null,
                        null,
                        null,
                        null,
                        null,
                        true);
            } finally {
                wire.caseDeadline = Long.MAX_VALUE;
                wire.lastStreamed = "nothing";
            }
            record(outcome);
        }
    }
}
