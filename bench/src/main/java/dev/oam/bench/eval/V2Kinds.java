package dev.oam.bench.eval;

import static dev.oam.bench.eval.EvalRules.argumentsRight;
import static dev.oam.bench.eval.EvalRules.containsAny;
import static dev.oam.bench.eval.EvalRules.errorNote;
import static dev.oam.bench.eval.EvalRules.violation;
import static dev.oam.bench.eval.EvalWire.isEvent;
import static dev.oam.bench.eval.EvalWire.isFor;
import static dev.oam.bench.eval.EvalWire.isMethod;
import static dev.oam.bench.eval.EvalWire.isResponse;
import static dev.oam.bench.eval.EvalWire.isStreamed;
import static dev.oam.bench.eval.EvalWire.ms;
import static dev.oam.bench.eval.EvalWire.parse;
import static dev.oam.bench.eval.EvalWire.quote;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bench.eval.EvalWire.CaseTimeout;
import dev.oam.bench.eval.EvalWire.Timed;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The cases of {@code bench/eval/v2} (and v3's tool, NPC, decision and content cases) on one backend, one outcome each:
 * tool cases with their calls counted, decisions, NPC turns with a forced grounding tool, content.
 */
final class V2Kinds {
    private final EvalConfig config;
    private final EvalWire wire;
    private final Map<String, String> specs; // backend -> model spec, kept up to date by EvalBench
    private final String model;

    V2Kinds(EvalConfig config, EvalWire wire, Map<String, String> specs, String model) {
        this.config = config;
        this.wire = wire;
        this.specs = specs;
        this.model = model;
    }

    static String modeOf(String kind) {
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
    Outcome toolCaseV2(JsonNode file, JsonNode c, String backend) {
        String kind = c.path("kind").asText();
        String mode = modeOf(kind);
        String instructions = file.path("instructions").asText();
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
                "{\"session\":\"" + session + "\",\"instructions\":" + quote(instructions) + ",\"model\":"
                        + specs.get(backend) + ",\"tools\":" + Json.write(tools) + ",\"options\":{\"toolChoice\":\""
                        + mode
                        + "\",\"maxToolRounds\":1,\"temperature\":0}}");
        String id = "r" + wire.nextId();
        long start = System.nanoTime();
        wire.send(
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
                Timed m = wire.next(x -> isFor(x, id) || isMethod(x, "tool/call") || isEvent(x, "modelStep"));
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
                        wire.send("x" + wire.nextId(), "session/cancel", "{\"session\":\"" + session + "\"}");
                        response = wire.await(x -> isFor(x, id)).message(); // the cancelled turn's error
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
                        wire.send("x" + wire.nextId(), "session/cancel", "{\"session\":\"" + session + "\"}");
                        response = wire.await(x -> isFor(x, id)).message();
                        break;
                    }
                    wire.reply(message, "{\"output\":" + output + "}");
                } else if (isResponse(message)) {
                    response = message;
                    break;
                }
            }
        } catch (CaseTimeout timeout) {
            wire.send("x" + wire.nextId(), "session/cancel", "{\"session\":\"" + session + "\"}");
            wire.drain(id);
            wire.call("session/delete", "{\"session\":\"" + session + "\"}");
            throw timeout;
        }
        double done = ms(start, System.nanoTime());
        wire.call("session/delete", "{\"session\":\"" + session + "\"}");
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

    Outcome decisionV2(JsonNode c, String backend) {
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
        Timed m = wire.await(
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

    Outcome npcV2(JsonNode file, JsonNode c, String backend) {
        String npc = "n" + wire.nextId();
        String toolName = c.path("tool").path("name").asText();
        wire.call(
                "npc/create",
                "{\"npc\":\"" + npc + "\",\"persona\":" + Json.write(c.path("persona")) + ",\"tools\":["
                        + Json.write(c.path("tool")) + "],\"model\":" + specs.get(backend)
                        + ",\"options\":{\"groundingTool\":\"" + toolName
                        + "\",\"maxToolRounds\":1,\"playerOptionCount\":3,\"temperature\":0}}");
        String id = "r" + wire.nextId();
        long start = System.nanoTime();
        wire.send(
                id,
                "npc/talk",
                "{\"npc\":\"" + npc + "\",\"line\":" + quote(c.path("line").asText()) + ",\"stream\":true}");
        Double first = null;
        JsonNode message;
        try {
            while (true) {
                Timed m = wire.next(x -> isFor(x, id) || isMethod(x, "tool/call"));
                message = m.message();
                if (first == null && isEvent(m, "lineDelta")) {
                    first = ms(start, m.at());
                }
                if (isMethod(m, "tool/call")) {
                    wire.reply(message, "{\"output\":" + Json.write(c.path("output")) + "}");
                } else if (isResponse(message)) {
                    break;
                }
            }
        } catch (CaseTimeout timeout) {
            wire.send("x" + wire.nextId(), "npc/cancel", "{\"npc\":\"" + npc + "\"}");
            wire.drain(id);
            wire.call("npc/delete", "{\"npc\":\"" + npc + "\"}");
            throw timeout;
        }
        double turn = ms(start, System.nanoTime());
        wire.call("npc/delete", "{\"npc\":\"" + npc + "\"}");
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

    Outcome contentV2(JsonNode c, String backend) {
        String session = "c" + wire.nextId();
        String bound = c.has("maxResponseTokens")
                ? ",\"maxResponseTokens\":" + c.path("maxResponseTokens").asInt()
                : "";
        wire.call(
                "session/create",
                "{\"session\":\"" + session + "\",\"instructions\":\"You write content for a fantasy game.\","
                        + "\"model\":" + specs.get(backend) + ",\"options\":{\"temperature\":0" + bound + "}}");
        String id = "r" + wire.nextId();
        long start = System.nanoTime();
        wire.send(
                id,
                "session/respond",
                "{\"session\":\"" + session + "\",\"prompt\":"
                        + quote(c.path("prompt").asText()) + ",\"schema\":" + Json.write(c.path("schema"))
                        + ",\"stream\":true}");
        Double first = null;
        JsonNode message;
        try {
            while (true) {
                Timed m = wire.next(x -> isFor(x, id));
                if (first == null && isStreamed(m.message())) {
                    first = ms(start, m.at());
                }
                if (isResponse(m.message())) {
                    message = m.message();
                    break;
                }
            }
        } catch (CaseTimeout timeout) {
            wire.send("x" + wire.nextId(), "session/cancel", "{\"session\":\"" + session + "\"}");
            wire.drain(id);
            wire.call("session/delete", "{\"session\":\"" + session + "\"}");
            throw timeout;
        }
        double turn = ms(start, System.nanoTime());
        wire.call("session/delete", "{\"session\":\"" + session + "\"}");
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
}
