package dev.oam.bench;

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
 * content generation) run on Gemma 3 270M twice, side by side in one run: on the embedded llama.cpp backend and on
 * the same file behind a real {@code llama-server} through the OpenAI backend. Each case runs on both backends one
 * right after the other, so load from other programs hits both alike. Every verdict is a rule a program applies to
 * the bridge's answer (the tool's name, argument values, schema validity, the option id, meta-talk, the fact the tool
 * returned); nothing is judged by a person or a model.
 *
 * <p>Timing: "turn" is from sending the request to the decision that is measured: for tool cases the first
 * {@code tool/call} (the turn is then cancelled, so the step after the tool is not timed) or the answer when no tool
 * is called; for the rest the response. "first token" is the first streamed output (text, a partial value, a line
 * delta or a tool call). Decode tokens/s is output tokens over the time after the first token, for completed,
 * streamed turns; tokens per turn are the turn's input and output tokens (not known for a cancelled tool turn).
 */
public final class EvalBench {
    private static final Duration WAIT = Duration.ofMinutes(10);
    private static final String INSTRUCTIONS = "You help the player in a fantasy town. When one of your tools fits the "
            + "player's request, call it with exactly the values the player gave. When none fits, answer in one short sentence.";

    record Config(Path root, int limit, Map<String, Integer> sample, List<String> kinds, List<String> backends, int threads, int toolTokens,
            int contentTokens, Set<String> cases) {}

    /** One case on one backend. */
    record Outcome(String kind, String backend, String mode, String id, boolean right, Boolean rightArgs, boolean valid,
            Boolean extra, double turnMs, Double firstMs, Integer inTokens, Integer outTokens, String note) {}

    private final Config config;
    private final List<Outcome> outcomes = new ArrayList<>();
    private final Map<String, String> specs = new LinkedHashMap<>();
    private InMemoryClient client;
    private PrintStream details;
    private int ids;

    private EvalBench(Config config) {
        this.config = config;
    }

    public static void main(String[] args) {
        Path root = Path.of(System.getProperty("oam.bench.root", ".")).toAbsolutePath().normalize();
        int limit = Integer.MAX_VALUE;
        List<String> kinds = List.of("tools", "decisions", "npc", "content");
        List<String> backends = List.of("llama", "llama-server");
        int threads = 2;
        int contentTokens = 160;
        Set<String> cases = Set.of();
        List<Path> reports = new ArrayList<>();
        Map<String, Integer> sample = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--limit" -> limit = Integer.parseInt(args[++i]);
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
                    System.out.println("usage: bench/run eval [--limit N] [--kinds tools,decisions,npc,content] "
                            + "[--backends llama,llama-server] [--threads N] [--content-tokens N] [--cases ID,…] [--report F.jsonl,…]\n"
                            + "  --limit N    the first N cases of each kind (default: all)\n"
                            + "  --sample K=N,…  N cases of kind K spread evenly over its file (e.g. tools=16)\n"
                            + "  --threads N  threads of both backends (default 2)\n"
                            + "  --content-tokens N  maxResponseTokens of the content turns (default 160)\n"
                            + "  --cases ID,…  only these case ids (of every kind chosen)\n"
                            + "  --report F.jsonl,…  no run: the table of the outcomes in these files (bench/target/eval-v1.jsonl of runs)");
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
            EvalBench bench = new EvalBench(new Config(root, limit, sample, kinds, backends, threads, 96, contentTokens, cases));
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
        Path set = config.root().resolve("bench/eval/v1");
        Path gemma = RealModels.gemma();
        long started = System.nanoTime();
        Files.createDirectories(config.root().resolve("bench/target"));
        details = new PrintStream(Files.newOutputStream(config.root().resolve("bench/target/eval-v1.jsonl")), true, StandardCharsets.UTF_8);
        LlamaServer server = null;
        try {
            if (config.backends().contains("llama-server")) {
                System.err.println("bench eval: starting llama-server on " + gemma);
                server = LlamaServer.start(RealModels.llamaServer(), gemma, 4096, 1, config.threads());
                specs.put("llama-server", "{\"type\":\"openai\",\"baseUrl\":\"" + server.baseUrl()
                        + "\",\"model\":\"gemma-3-270m\",\"contextSize\":4096}");
            }
            if (config.backends().contains("llama")) {
                specs.put("llama", "{\"type\":\"llama\",\"path\":" + Json.write(Json.mapper().valueToTree(gemma.toString()))
                        + ",\"contextSize\":4096,\"threads\":" + config.threads() + "}");
            }
            client = InMemoryClient.connect(BridgeConfiguration.builder());
            call("initialize", "{\"protocolVersion\":\"1.0\"}");
            for (String kind : config.kinds()) {
                JsonNode file = Json.parse(Files.readString(set.resolve(kind + ".json")));
                List<JsonNode> chosen = new ArrayList<>();
                file.path("cases").forEach(chosen::add);
                Integer spread = config.sample().get(kind);
                if (spread != null && spread < chosen.size()) {
                    List<JsonNode> picked = new ArrayList<>();
                    for (int k = 0; k < spread; k++) {
                        picked.add(chosen.get((int) ((long) k * chosen.size() / spread)));
                    }
                    chosen = picked;
                }
                if (!config.cases().isEmpty()) {
                    chosen = chosen.stream().filter(c -> config.cases().contains(c.path("id").asText())).toList();
                }
                int n = 0;
                for (JsonNode c : chosen) {
                    if (n++ >= config.limit()) {
                        break;
                    }
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
            }
        } finally {
            if (client != null) {
                client.endInput();
            }
            if (server != null) {
                server.close();
            }
            details.close();
        }
        double minutes = (System.nanoTime() - started) / 60e9;
        System.out.println(report(minutes));
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

    private void record(Outcome outcome) {
        outcomes.add(outcome);
        details.println(Json.write(Json.mapper().valueToTree(outcome)));
        System.err.printf(Locale.ROOT, "bench eval: %-9s %-12s %-8s %s right=%s args=%s valid=%s %.1f s %s%n", outcome.kind(),
                outcome.backend(), outcome.mode(), outcome.id(), outcome.right(), outcome.rightArgs(), outcome.valid(),
                outcome.turnMs() / 1000, outcome.note() == null ? "" : outcome.note());
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
        call("session/create", "{\"session\":\"" + session + "\",\"instructions\":" + quote(INSTRUCTIONS) + ",\"model\":"
                + specs.get(backend) + ",\"tools\":" + Json.write(tools) + ",\"options\":{\"toolChoice\":\"" + mode
                + "\",\"maxToolRounds\":1,\"maxResponseTokens\":" + config.toolTokens() + ",\"temperature\":0}}");
        String id = "r" + (++ids);
        long start = System.nanoTime();
        send(id, "session/respond", "{\"session\":\"" + session + "\",\"prompt\":" + quote(c.path("prompt").asText())
                + ",\"stream\":true}");
        Double first = null;
        JsonNode expect = c.path("expect");
        String expected = expect.path("tool").isNull() ? null : expect.path("tool").asText();
        while (true) {
            Timed m = next(x -> isFor(x, id) || "tool/call".equals(x.message().path("method").asText()));
            if (first == null && (isStreamed(m.message()) || "tool/call".equals(m.message().path("method").asText()))) {
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
                return new Outcome("tools", backend, mode, c.path("id").asText(), right, args, valid, null, turn, first, null, null,
                        name + " " + Json.write(call.path("arguments")));
            }
            if (isResponse(message)) {
                double turn = ms(start, m.at());
                call("session/delete", "{\"session\":\"" + session + "\"}");
                JsonNode result = message.path("result");
                if (message.has("error")) {
                    return new Outcome("tools", backend, mode, c.path("id").asText(), false, null, false, null, turn, first, null, null,
                            "error " + message.path("error").path("code").asInt());
                }
                JsonNode usage = result.path("usage");
                return new Outcome("tools", backend, mode, c.path("id").asText(), expected == null, null, true, null, turn, first,
                        usage.path("inputTokens").asInt(), usage.path("outputTokens").asInt(), "answered without a call");
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
                boolean same = equals.isNumber() ? value.isNumber() && value.decimalValue().compareTo(equals.decimalValue()) == 0
                        : value.asText().equalsIgnoreCase(equals.asText());
                if (!same) {
                    return false;
                }
            }
            JsonNode contains = rule.getValue().get("contains");
            if (contains != null && !value.asText().toLowerCase(Locale.ROOT).contains(contains.asText().toLowerCase(Locale.ROOT))) {
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
            return new Outcome("decisions", backend, "-", c.path("id").asText(), false, null, false, null, turn, null, null, null,
                    "error " + m.message().path("error").path("code").asInt());
        }
        List<String> options = new ArrayList<>();
        c.path("options").forEach(o -> options.add(o.path("id").asText()));
        String chosen = result.path("optionID").asText();
        boolean valid = options.contains(chosen) && !result.path("isFallback").asBoolean(true);
        JsonNode usage = result.path("usage");
        return new Outcome("decisions", backend, "-", c.path("id").asText(), valid && chosen.equals(c.path("right").asText()), null,
                valid, null, turn, null, usage.path("inputTokens").asInt(), usage.path("outputTokens").asInt(), chosen);
    }

    private Outcome npc(JsonNode file, JsonNode c, String backend) {
        String npc = "n" + (++ids);
        String toolName = c.path("tool").path("name").asText();
        call("npc/create", "{\"npc\":\"" + npc + "\",\"persona\":" + Json.write(c.path("persona")) + ",\"tools\":["
                + Json.write(c.path("tool")) + "],\"model\":" + specs.get(backend) + ",\"options\":{\"groundingTool\":\"" + toolName
                + "\",\"maxToolRounds\":1,\"playerOptionCount\":2,\"maximumResponseTokens\":128,\"temperature\":0}}");
        String id = "r" + (++ids);
        long start = System.nanoTime();
        send(id, "npc/talk", "{\"npc\":\"" + npc + "\",\"line\":" + quote(c.path("line").asText()) + ",\"stream\":true}");
        Double first = null;
        while (true) {
            Timed m = next(x -> isFor(x, id) || "tool/call".equals(x.message().path("method").asText()));
            JsonNode message = m.message();
            if (first == null && "npc/event".equals(message.path("method").asText())
                    && message.path("params").path("event").path("type").asText().equals("lineDelta")) {
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
                    return new Outcome("npc", backend, "-", c.path("id").asText(), false, null, false, false, turn, first, null, null,
                            "error " + message.path("error").path("code").asInt());
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
                return new Outcome("npc", backend, "-", c.path("id").asText(), fact, null, valid, inPersona, turn, first,
                        usage.path("inputTokens").asInt(), usage.path("outputTokens").asInt(), line);
            }
        }
    }

    private Outcome content(JsonNode c, String backend) {
        String session = "c" + (++ids);
        call("session/create", "{\"session\":\"" + session + "\",\"instructions\":\"You write content for a fantasy game.\","
                + "\"model\":" + specs.get(backend) + ",\"options\":{\"maxResponseTokens\":" + config.contentTokens()
                + ",\"temperature\":0}}");
        String id = "r" + (++ids);
        long start = System.nanoTime();
        send(id, "session/respond", "{\"session\":\"" + session + "\",\"prompt\":" + quote(c.path("prompt").asText()) + ",\"schema\":"
                + Json.write(c.path("schema")) + ",\"stream\":true}");
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
                    return new Outcome("content", backend, "-", c.path("id").asText(), false, null, false, null, turn, first, null, null,
                            "error " + m.message().path("error").path("code").asInt());
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
                return new Outcome("content", backend, "-", c.path("id").asText(), valid && topic, null, valid, null, turn, first,
                        usage.path("inputTokens").asInt(), usage.path("outputTokens").asInt(), Json.write(value));
            }
        }
    }

    private static String violation(JsonNode schema, JsonNode value) {
        try {
            return GenerationSchema.convert(schema, "eval").firstViolation(value).orElse(null);
        } catch (Exception e) {
            return "schema: " + e.getMessage();
        }
    }

    // ---------------------------------------------------------------- the report

    private String report(double minutes) {
        StringBuilder out = new StringBuilder();
        out.append(Double.isNaN(minutes)
                ? String.format(Locale.ROOT, "oam eval v1 on Gemma 3 270M Q4_K_M, %d turns (from earlier runs' outcomes)%n%n", outcomes.size())
                : String.format(Locale.ROOT, "oam eval v1 on Gemma 3 270M Q4_K_M, %d threads, %.1f minutes, %d turns%n%n",
                        config.threads(), minutes, outcomes.size()));
        out.append("| kind | backend | toolChoice | cases | right | right args | valid | in persona | turn p50 / p95 s | first token p50 s | decode tok/s | tokens in / out per turn |\n");
        out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        Map<String, List<Outcome>> groups = new LinkedHashMap<>();
        for (Outcome o : outcomes) {
            groups.computeIfAbsent(o.kind() + "|" + o.backend() + "|" + o.mode(), k -> new ArrayList<>()).add(o);
        }
        for (Map.Entry<String, List<Outcome>> group : groups.entrySet()) {
            String[] key = group.getKey().split("\\|");
            List<Outcome> list = group.getValue();
            List<Double> turns = list.stream().map(Outcome::turnMs).toList();
            List<Double> firsts = list.stream().map(Outcome::firstMs).filter(x -> x != null).toList();
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
            long withArgs = list.stream().filter(o -> o.rightArgs() != null).count();
            out.append(String.format(Locale.ROOT, "| %s | %s | %s | %d | %s | %s | %s | %s | %s / %s | %s | %s | %s / %s |%n",
                    label(key[0]), key[1], key[2], list.size(), pct(list.stream().filter(Outcome::right).count(), list.size()),
                    withArgs == 0 ? "–" : pct(list.stream().filter(o -> Boolean.TRUE.equals(o.rightArgs())).count(), withArgs),
                    pct(list.stream().filter(Outcome::valid).count(), list.size()),
                    key[0].equals("npc") ? pct(list.stream().filter(o -> Boolean.TRUE.equals(o.extra())).count(), list.size()) : "–",
                    seconds(percentile(turns, 50)), seconds(percentile(turns, 95)), firsts.isEmpty() ? "–" : seconds(percentile(firsts, 50)),
                    rates.isEmpty() ? "–" : String.format(Locale.ROOT, "%.1f", percentile(rates, 50)),
                    ins.isEmpty() ? "–" : String.format(Locale.ROOT, "%.0f", percentile(ins, 50)),
                    outs.isEmpty() ? "–" : String.format(Locale.ROOT, "%.0f", percentile(outs, 50))));
        }
        out.append("\nright: tools = the expected tool called (or, where no tool fits, an answer without a call); decisions = the right option;"
                + " npc = the reply names the fact the tool returned; content = valid and on topic. right args: of the right calls, the"
                + " arguments carry the prompt's values. valid: arguments fit the tool's schema / an offered option without fallback /"
                + " a non-fallback line / the value fits the schema. Medians for tokens and decode rate; details per case in"
                + " bench/target/eval-v1.jsonl.\n");
        return out.toString();
    }

    private static String label(String kind) {
        return switch (kind) {
            case "tools" -> "tool selection";
            case "decisions" -> "decision";
            case "npc" -> "NPC turn";
            default -> "content";
        };
    }

    private static String pct(long part, long whole) {
        return whole == 0 ? "–" : Math.round(100.0 * part / whole) + " %";
    }

    private static String seconds(double ms) {
        return String.format(Locale.ROOT, "%.1f", ms / 1000);
    }

    static double percentile(List<Double> values, int p) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }

    // ---------------------------------------------------------------- the wire

    private record Timed(long at, JsonNode message) {}

    private void send(String id, String method, String params) {
        client.send(("{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"" + method + "\",\"params\":" + params + "}")
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
            long left = deadline - System.nanoTime();
            if (left <= 0) {
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
        return isResponse(timed.message()) && id.equals(timed.message().path("id").asText());
    }

    private static boolean isResponse(JsonNode message) {
        return message.has("id") && !message.has("method");
    }

    /** Streamed output: text, a partial value, a line delta or a tool call starting (not the modelStep announcement). */
    private static boolean isStreamed(JsonNode message) {
        String method = message.path("method").asText();
        if (!method.equals("session/event") && !method.equals("npc/event")) {
            return false;
        }
        String type = message.path("params").path("event").path("type").asText();
        return type.equals("text") || type.equals("partial") || type.equals("lineDelta") || type.equals("toolCallStarted");
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
}
