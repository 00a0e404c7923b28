package dev.oam.bench.eval;

import static dev.oam.bench.eval.EvalRules.argumentsRight;
import static dev.oam.bench.eval.EvalRules.errorNote;
import static dev.oam.bench.eval.EvalRules.violation;
import static dev.oam.bench.eval.EvalWire.isFor;
import static dev.oam.bench.eval.EvalWire.isResponse;
import static dev.oam.bench.eval.EvalWire.isStreamed;
import static dev.oam.bench.eval.EvalWire.ms;
import static dev.oam.bench.eval.EvalWire.parse;
import static dev.oam.bench.eval.EvalWire.quote;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bench.eval.EvalWire.Timed;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The cases of {@code bench/eval/v1} on one backend: tool selection, decisions, NPC turns, content (one outcome each).
 */
final class V1Kinds {
    private static final String INSTRUCTIONS = "You help the player in a fantasy town. When one of your tools fits the "
            + "player's request, call it with exactly the values the player gave. When none fits, answer in one short sentence.";

    private final EvalConfig config;
    private final EvalWire wire;
    private final Map<String, String> specs; // backend -> model spec, kept up to date by EvalBench
    private final String model;

    V1Kinds(EvalConfig config, EvalWire wire, Map<String, String> specs, String model) {
        this.config = config;
        this.wire = wire;
        this.specs = specs;
        this.model = model;
    }

    /** A v1 outcome, of the model being run. */
    Outcome outcome(
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

    Outcome toolCase(JsonNode file, JsonNode c, String backend, String mode) {
        String session = "t" + wire.nextId();
        ArrayNode tools = Json.array();
        for (JsonNode name : c.path("tools")) {
            ObjectNode tool = Json.object();
            tool.put("name", name.asText());
            tool.setAll((ObjectNode) file.path("tools").path(name.asText()));
            tools.add(tool);
        }
        wire.call(
                "session/create",
                "{\"session\":\"" + session + "\",\"instructions\":" + quote(INSTRUCTIONS) + ",\"model\":"
                        + specs.get(backend) + ",\"tools\":" + Json.write(tools) + ",\"options\":{\"toolChoice\":\""
                        + mode
                        + "\",\"maxToolRounds\":1,\"maxResponseTokens\":" + config.toolTokens()
                        + ",\"temperature\":0}}");
        String id = "r" + wire.nextId();
        long start = System.nanoTime();
        wire.send(
                id,
                "session/respond",
                "{\"session\":\"" + session + "\",\"prompt\":"
                        + quote(c.path("prompt").asText()) + ",\"stream\":true}");
        Double first = null;
        JsonNode expect = c.path("expect");
        String expected =
                expect.path("tool").isNull() ? null : expect.path("tool").asText();
        while (true) {
            Timed m = wire.next(x -> isFor(x, id)
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
                wire.send("x" + wire.nextId(), "session/cancel", "{\"session\":\"" + session + "\"}");
                wire.await(x -> isFor(x, id)); // the cancelled turn's error
                wire.call("session/delete", "{\"session\":\"" + session + "\"}");
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
                wire.call("session/delete", "{\"session\":\"" + session + "\"}");
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

    Outcome decision(JsonNode c, String backend) {
        ObjectNode params = Json.object();
        params.put("situation", c.path("situation").asText());
        params.set("options", c.path("options"));
        if (c.has("actor")) {
            params.set("actor", c.path("actor"));
        }
        params.put("temperature", 0);
        params.set("model", parse(specs.get(backend)));
        String id = "d" + wire.nextId();
        long start = System.nanoTime();
        wire.send(id, "decision/decide", Json.write(params));
        Timed m = wire.await(x -> isFor(x, id));
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

    Outcome npc(JsonNode file, JsonNode c, String backend) {
        String npc = "n" + wire.nextId();
        String toolName = c.path("tool").path("name").asText();
        wire.call(
                "npc/create",
                "{\"npc\":\"" + npc + "\",\"persona\":" + Json.write(c.path("persona")) + ",\"tools\":["
                        + Json.write(c.path("tool")) + "],\"model\":" + specs.get(backend)
                        + ",\"options\":{\"groundingTool\":\"" + toolName
                        + "\",\"maxToolRounds\":1,\"playerOptionCount\":2,\"maximumResponseTokens\":128,\"temperature\":0}}");
        String id = "r" + wire.nextId();
        long start = System.nanoTime();
        wire.send(
                id,
                "npc/talk",
                "{\"npc\":\"" + npc + "\",\"line\":" + quote(c.path("line").asText()) + ",\"stream\":true}");
        Double first = null;
        while (true) {
            Timed m = wire.next(x -> isFor(x, id)
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
                wire.reply(message, "{\"output\":" + Json.write(c.path("output")) + "}");
                continue;
            }
            if (isResponse(message)) {
                double turn = ms(start, m.at());
                wire.call("npc/delete", "{\"npc\":\"" + npc + "\"}");
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

    Outcome content(JsonNode c, String backend) {
        String session = "c" + wire.nextId();
        wire.call(
                "session/create",
                "{\"session\":\"" + session + "\",\"instructions\":\"You write content for a fantasy game.\","
                        + "\"model\":" + specs.get(backend) + ",\"options\":{\"maxResponseTokens\":"
                        + config.contentTokens()
                        + ",\"temperature\":0}}");
        String id = "r" + wire.nextId();
        long start = System.nanoTime();
        wire.send(
                id,
                "session/respond",
                "{\"session\":\"" + session + "\",\"prompt\":"
                        + quote(c.path("prompt").asText()) + ",\"schema\":" + Json.write(c.path("schema"))
                        + ",\"stream\":true}");
        Double first = null;
        while (true) {
            Timed m = wire.next(x -> isFor(x, id));
            if (first == null && isStreamed(m.message())) {
                first = ms(start, m.at());
            }
            if (isResponse(m.message())) {
                double turn = ms(start, m.at());
                wire.call("session/delete", "{\"session\":\"" + session + "\"}");
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
}
