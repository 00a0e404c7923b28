package dev.oam.game.npc;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolReply;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code remember_fact} and {@code change_relationship} (docs/GAMES.md, "Memory tools"). Changes are staged during a
 * turn and committed only when the turn succeeds.
 */
public final class MemoryTools {
    public static final String REMEMBER_FACT = "remember_fact";
    public static final String CHANGE_RELATIONSHIP = "change_relationship";

    private final boolean remember;
    private final boolean change;
    private final int limit;
    private final int maxFacts;
    private Memory base;
    private final List<String> stagedFacts = new ArrayList<>(); // guarded by this
    private int stagedDelta; // guarded by this

    public MemoryTools(boolean remember, boolean change, int maxRelationshipChange, int maxFacts, Memory base) {
        this.remember = remember;
        this.change = change;
        this.limit = Math.max(1, maxRelationshipChange);
        this.maxFacts = maxFacts;
        this.base = base;
    }

    public List<ToolDefinition> definitions() {
        List<ToolDefinition> tools = new ArrayList<>();
        if (remember) {
            ObjectNode params = Json.object();
            params.put("type", "object");
            params.putObject("properties")
                    .putObject("fact")
                    .put("type", "string")
                    .put("description", "One short fact to remember.");
            params.putArray("required").add("fact");
            tools.add(new ToolDefinition(
                    REMEMBER_FACT,
                    "Remember one short fact about the player or the world for later " + "conversations.",
                    params,
                    null));
        }
        if (change) {
            ObjectNode params = Json.object();
            params.put("type", "object");
            ObjectNode props = params.putObject("properties");
            props.putObject("reason").put("type", "string").put("description", "Why your feelings change.");
            ObjectNode delta = props.putObject("delta");
            delta.put("type", "integer")
                    .put("minimum", -limit)
                    .put("maximum", limit)
                    .put("description", "How much your attitude toward the player changes (negative: worse).");
            params.putArray("required").add("reason").add("delta");
            tools.add(new ToolDefinition(
                    CHANGE_RELATIONSHIP,
                    "Change how you feel about the player when they clearly please " + "or offend you.",
                    params,
                    null));
        }
        return tools;
    }

    public boolean handles(String name) {
        return (remember && name.equals(REMEMBER_FACT)) || (change && name.equals(CHANGE_RELATIONSHIP));
    }

    /** Runs a call against the staging area. */
    public synchronized ToolReply execute(ToolCall call) {
        if (call.name().equals(REMEMBER_FACT)) {
            String fact = call.arguments().path("fact").asText("").strip();
            if (fact.isEmpty()) {
                return ToolReply.error("The fact is empty; say what to remember.");
            }
            String key = normalize(fact);
            boolean known = base.facts().stream().anyMatch(f -> normalize(f).equals(key))
                    || stagedFacts.stream().anyMatch(f -> normalize(f).equals(key));
            if (known) {
                return ToolReply.output(Json.mapper().getNodeFactory().textNode("You already know that."));
            }
            stagedFacts.add(fact);
            return ToolReply.output(Json.mapper().getNodeFactory().textNode("Remembered."));
        }
        int delta = call.arguments().path("delta").asInt(0);
        delta = Math.max(-limit, Math.min(limit, delta));
        stagedDelta += delta;
        int value = Math.max(-100, Math.min(100, base.relationship() + stagedDelta));
        return ToolReply.output(Json.mapper()
                .getNodeFactory()
                .textNode("You now feel " + Memory.attitude(value) + " toward the player (" + value + ")."));
    }

    /** The memory with the staged changes applied (facts capped at {@code maxFacts}, oldest dropped). */
    public synchronized Memory committed() {
        List<String> facts = new ArrayList<>(base.facts());
        facts.addAll(stagedFacts);
        while (facts.size() > maxFacts && !facts.isEmpty()) {
            facts.remove(0);
        }
        return new Memory(facts, base.relationship() + stagedDelta, base.summary());
    }

    public synchronized void discard() {
        stagedFacts.clear();
        stagedDelta = 0;
    }

    private static String normalize(String text) {
        StringBuilder out = new StringBuilder();
        for (char c : text.toLowerCase(Locale.ROOT).toCharArray()) {
            if (Character.isLetterOrDigit(c)) {
                out.append(c);
            }
        }
        return out.toString();
    }
}
