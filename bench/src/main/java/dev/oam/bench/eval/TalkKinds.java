package dev.oam.bench.eval;

import static dev.oam.bench.eval.EvalWire.isEvent;
import static dev.oam.bench.eval.EvalWire.isFor;
import static dev.oam.bench.eval.EvalWire.isMethod;
import static dev.oam.bench.eval.EvalWire.isResponse;
import static dev.oam.bench.eval.EvalWire.ms;
import static dev.oam.bench.eval.EvalWire.quote;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bench.eval.EvalWire.CaseTimeout;
import dev.oam.bench.eval.EvalWire.Timed;
import dev.oam.core.json.Json;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** v3's {@code talk} cases on one backend: NPC conversations in one bridge, judged turn by turn. */
final class TalkKinds {
    private final EvalConfig config;
    private final EvalWire wire;
    private final Map<String, String> specs; // backend -> model spec, kept up to date by EvalBench
    private final String model;

    TalkKinds(EvalConfig config, EvalWire wire, Map<String, String> specs, String model) {
        this.config = config;
        this.wire = wire;
        this.specs = specs;
        this.model = model;
    }

    /**
     * A v3 conversation: the case's NPCs (over its world when it has one, {@code read_world_state} forced as the
     * grounding tool) created in one bridge on the backend, its turns in order, then its barks. Judged per the file's
     * {@code about}: every turn valid and clean, each fact named by its turn, no secret told; {@code extra}: no turn
     * repeats itself or an earlier line of its NPC.
     */
    Outcome talkV3(JsonNode c, String backend) {
        String caseId = c.path("id").asText();
        String prefix = "v" + wire.nextId() + "-";
        String world = null;
        if (c.has("world")) {
            world = prefix + "world";
            wire.call("world/create", "{\"world\":\"" + world + "\",\"state\":" + Json.write(c.path("world")) + "}");
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
                wire.call(
                        "npc/create",
                        "{\"npc\":\"" + prefix + npc.getKey() + "\",\"persona\":" + Json.write(spec.path("persona"))
                                + (spec.path("world").asBoolean(false) ? ",\"world\":\"" + world + "\"" : "")
                                + ",\"model\":" + specs.get(backend) + ",\"options\":" + Json.write(options) + "}");
                created.add(prefix + npc.getKey());
            }
            for (JsonNode turn : c.path("turns")) {
                String npc = turn.path("npc").asText();
                String id = "r" + wire.nextId();
                long turnStart = System.nanoTime();
                wire.send(
                        id,
                        "npc/talk",
                        "{\"npc\":\"" + prefix + npc + "\",\"line\":"
                                + quote(turn.path("line").asText()) + ",\"stream\":true}");
                JsonNode message;
                while (true) {
                    Timed m = wire.next(x -> isFor(x, id) || isMethod(x, "tool/call"));
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
                JsonNode result = wire.call(
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
                wire.send("x" + wire.nextId(), "npc/cancel", "{\"npc\":\"" + npc + "\"}");
            }
            throw timeout;
        } catch (IllegalStateException failed) { // a bark's error: recorded, the case goes on to its verdict
            valid = false;
            note.append(failed.getMessage());
        } finally {
            wire.caseDeadline = System.nanoTime() + Duration.ofMinutes(1).toNanos();
            for (String npc : created) {
                wire.call("npc/delete", "{\"npc\":\"" + npc + "\"}");
            }
            if (world != null) {
                wire.call("world/delete", "{\"world\":\"" + world + "\"}");
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
}
