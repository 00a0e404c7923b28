package dev.oam.game.npc;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.Compactor;
import dev.oam.core.json.Json;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** How each NPC turn is worded (docs/GAMES.md, "Turn building"). */
public final class NpcPrompts {
    public enum SecretVisibility {
        HIDDEN,
        GUARDED,
        SHAREABLE
    }

    private NpcPrompts() {}

    public static SecretVisibility secrets(Persona persona, NpcOptions options, int relationship) {
        if (persona.secrets().isEmpty()) {
            return SecretVisibility.HIDDEN;
        }
        Integer threshold = options.secretsUnlockAtRelationship();
        if (threshold == null) {
            return SecretVisibility.GUARDED;
        }
        return relationship >= threshold ? SecretVisibility.SHAREABLE : SecretVisibility.HIDDEN;
    }

    /** The persona block, the rules and the extra lines. */
    public static String instructions(
            Persona persona,
            NpcOptions options,
            boolean hasFactTools,
            SecretVisibility secrets,
            boolean hasRememberFact,
            boolean hasChangeRelationship,
            boolean textMode) {
        List<String> lines = new ArrayList<>();
        lines.add(
                persona.role().isBlank()
                        ? "You play " + persona.name() + ", a character in a video game."
                        : "You play " + persona.name() + ", " + persona.role().strip()
                                + ", a character in a video game.");
        field(lines, "Personality: ", persona.personality());
        field(lines, "Speaking style: ", persona.speakingStyle());
        field(lines, "Background: ", persona.backstory());
        list(lines, "Goals: ", persona.goals());
        list(lines, "You know: ", persona.knowledge());
        if (secrets != SecretVisibility.HIDDEN) {
            list(lines, "Your secret: ", persona.secrets());
        }
        lines.add("Rules:");
        lines.add("- Speak only as " + persona.name() + ". Never say you are an AI, a model or an assistant.");
        int sentences = Math.max(1, persona.maxSentences());
        lines.add("- Reply in at most " + sentences + " short sentence" + (sentences == 1 ? "" : "s") + ".");
        if (hasFactTools) {
            lines.add("- Use your tools to check facts about the world, such as items, prices, people and "
                    + "places. Never make them up.");
            lines.add("- When a tool gives you facts, tell the player the specific ones they asked about "
                    + "(names, prices, numbers).");
        } else {
            lines.add("- If you do not know a fact about the world, say so in character. Never make it up.");
        }
        if (secrets == SecretVisibility.GUARDED) {
            lines.add("- Keep your secret unless the player has truly earned your trust.");
        } else if (secrets == SecretVisibility.SHAREABLE) {
            lines.add("- The player has earned your trust. You may share your secret if asked.");
        }
        if (options.extraInstructions() != null && !options.extraInstructions().isBlank()) {
            lines.add(options.extraInstructions().strip());
        }
        if (hasRememberFact) {
            lines.add("- When the player tells you something worth remembering, call remember_fact.");
        }
        if (hasChangeRelationship) {
            lines.add("- When the player clearly pleases or offends you, call change_relationship.");
        }
        if (textMode) {
            lines.add("- Begin every reply with your current emotion in square brackets, such as [happy] or [angry].");
        }
        return String.join("\n", lines);
    }

    /** The memory block (the agent's context note), or {@code null} when there is nothing to say. */
    public static @Nullable String memoryNote(Memory memory, boolean changeRelationshipTool) {
        List<String> lines = new ArrayList<>();
        if (changeRelationshipTool || memory.relationship() != 0) {
            lines.add("- You feel " + Memory.attitude(memory.relationship()) + " toward the player ("
                    + memory.relationship() + " on a scale from -100 to 100).");
        }
        if (!memory.facts().isEmpty()) {
            lines.add("- You remember: " + joinItems(memory.facts()));
        }
        if (memory.summary() != null && !memory.summary().isBlank()) {
            lines.add("- Earlier conversation: " + memory.summary().strip());
        }
        if (lines.isEmpty()) {
            return null;
        }
        lines.add(0, "Memory:");
        return String.join("\n", lines);
    }

    /** The user prompt: game state, situation, the player's line. */
    public static String prompt(@Nullable String worldSummary, @Nullable String situation, String playerLine) {
        List<String> lines = new ArrayList<>();
        if (worldSummary != null && !worldSummary.isBlank()) {
            lines.add("Game state:\n" + worldSummary);
        }
        if (situation != null && !situation.isBlank()) {
            lines.add("Situation: " + situation.strip());
        }
        lines.add("Player: " + (playerLine.isBlank() ? "(The player says nothing.)" : playerLine.strip()));
        return String.join("\n", lines);
    }

    /**
     * A bark's prompt: game state, situation, and what to say. No "Player:" line: with the player saying nothing,
     * SmolLM2-135M barked "(The player says nothing.)" back.
     */
    public static String barkPrompt(@Nullable String worldSummary, String situation, String name) {
        List<String> lines = new ArrayList<>();
        if (worldSummary != null && !worldSummary.isBlank()) {
            lines.add("Game state:\n" + worldSummary);
        }
        lines.add("Situation: " + situation.strip());
        lines.add("Say one short line out loud, as " + name + " would say it to people passing by.");
        return String.join("\n", lines);
    }

    /** The situation text of a {@code context}/{@code situation} parameter: strings as they are, JSON compact. */
    public static @Nullable String situation(@Nullable JsonNode value) {
        if (value == null || value.isNull()) {
            return null;
        }
        return Json.text(value);
    }

    /**
     * The structured reply schema (docs/GAMES.md, "The structured reply"): emotion, line, [player_options],
     * [ends_conversation].
     */
    public static ObjectNode replySchema(Persona persona, NpcOptions options) {
        ObjectNode schema = Json.object();
        schema.put("type", "object");
        ObjectNode properties = schema.putObject("properties");
        ObjectNode emotion = properties.putObject("emotion");
        emotion.put("type", "string");
        ArrayNode values = emotion.putArray("enum");
        options.emotions().stream().distinct().forEach(e -> values.add(e.wireName()));
        emotion.put("description", "your mood");
        ObjectNode line = properties.putObject("line");
        line.put("type", "string");
        int sentences = Math.max(1, persona.maxSentences());
        line.put(
                "description",
                "your spoken reply to the player, at most " + sentences + " short sentence"
                        + (sentences == 1 ? "" : "s") + ", with the facts a tool gave you");
        ArrayNode required = Json.array().add("emotion").add("line");
        int count = options.optionCount();
        if (count > 0) {
            ObjectNode playerOptions = properties.putObject("player_options");
            playerOptions.put("type", "array");
            playerOptions.putObject("items").put("type", "string");
            playerOptions.put("minItems", count);
            playerOptions.put("maxItems", count);
            // Examples of the kind of line wanted: described only as "what the player might answer", a small model
            // writes mood words or identifiers ("happy_player_options_1") instead of lines.
            playerOptions.put(
                    "description",
                    count + " short things the player could say back to you, such as \"Tell me more.\" or "
                            + "\"Goodbye.\"");
            required.add("player_options");
        }
        if (options.canEndConversation()) {
            ObjectNode ends = properties.putObject("ends_conversation");
            ends.put("type", "boolean");
            ends.put("description", "true only if you end the conversation");
            required.add("ends_conversation");
        }
        schema.set("required", required);
        schema.put("additionalProperties", false);
        return schema;
    }

    /**
     * The prompt of the automatic retry: the original prompt, the facts already looked up, and a request for a plain
     * line.
     */
    public static String retryPrompt(String prompt, List<String> factLines) {
        StringBuilder out = new StringBuilder(prompt);
        if (!factLines.isEmpty()) {
            out.append("\nFacts you just looked up:");
            for (String fact : factLines.subList(0, Math.min(6, factLines.size()))) {
                out.append("\n- ").append(fact);
            }
        }
        out.append("\nAnswer with one short spoken line in character, starting with your emotion in square brackets.");
        return out.toString();
    }

    private static void field(List<String> lines, String label, String value) {
        if (value != null && !value.isBlank()) {
            lines.add(label + terminate(value.strip()));
        }
    }

    private static void list(List<String> lines, String label, List<String> items) {
        String joined = joinItems(items);
        if (!joined.isEmpty()) {
            lines.add(label + joined);
        }
    }

    /** Items trimmed, a trailing period dropped, joined with "; ", ending with a period. */
    static String joinItems(List<String> items) {
        List<String> cleaned = new ArrayList<>();
        for (String item : items) {
            String s = item.strip();
            while (s.endsWith(".")) {
                s = s.substring(0, s.length() - 1).strip();
            }
            if (!s.isEmpty()) {
                cleaned.add(s);
            }
        }
        return cleaned.isEmpty() ? "" : String.join("; ", cleaned) + ".";
    }

    static String terminate(String text) {
        if (text.isEmpty()) {
            return text;
        }
        char last = text.charAt(text.length() - 1);
        return ".!?\"'".indexOf(last) >= 0 ? text : text + ".";
    }

    /**
     * How an NPC's conversation is folded into its memory summary (docs/GAMES.md, "Compaction"), for the shared
     * {@link Compactor}: instructions in the NPC's name, and a prompt with the summary so far, then one line per entry
     * ({@code Player: …} from the turn's prompt, {@code Name: line} from its replies, tool calls and results in
     * brackets).
     */
    public static Compactor.Format memoryFormat(Persona persona) {
        String name = persona.name();
        String instructions = "You keep " + name + "'s memory of talking with the player in a video game. Merge the "
                + "conversation into the summary. If " + name
                + "'s turns are JSON, only \"line\" was said aloud. Keep names, "
                + "promises, deals, items, prices, facts learned and feelings. Write at most 100 words, in "
                + "the third person.";
        return new Compactor.Format() {
            @Override
            public String instructions() {
                return instructions;
            }

            @Override
            public String prompt(List<TranscriptEntry> entries, @Nullable String summarySoFar) {
                StringBuilder lines = new StringBuilder();
                for (TranscriptEntry entry : entries) {
                    switch (entry) {
                        case TranscriptEntry.Prompt prompt -> {
                            String text = prompt.text();
                            int at = text.lastIndexOf("Player: ");
                            lines.append(at >= 0 ? text.substring(at) : "Player: " + text)
                                    .append('\n');
                        }
                        case TranscriptEntry.ToolCalls calls ->
                            calls.calls()
                                    .forEach(call -> lines.append('[')
                                            .append(name)
                                            .append(" used ")
                                            .append(call.name())
                                            .append(' ')
                                            .append(Json.write(call.arguments()))
                                            .append("]\n"));
                        case TranscriptEntry.ToolOutput output ->
                            lines.append('[')
                                    .append(output.toolName())
                                    .append(" result: ")
                                    .append(output.text())
                                    .append("]\n");
                        case TranscriptEntry.Response response -> {
                            JsonNode structured = response.structured();
                            String spoken = structured != null
                                    ? structured.path("line").asText(response.text())
                                    : response.text();
                            lines.append(name).append(": ").append(spoken).append('\n');
                        }
                    }
                }
                return (summarySoFar == null ? "" : "Summary so far: " + summarySoFar.strip() + "\n\n")
                        + "Conversation to fold into the summary:\n"
                        + lines.toString().strip();
            }
        };
    }
}
