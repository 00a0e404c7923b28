package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.Options;
import dev.oam.bridge.spi.Params;
import dev.oam.core.agent.SamplerCodec;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.json.Durations;
import dev.oam.core.json.Json;
import dev.oam.core.model.Sampling;
import dev.oam.game.npc.Emotion;
import dev.oam.game.npc.NpcOptions;
import dev.oam.game.npc.ReplyFormat;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/** Reads and writes NPC options; every option of the table, validated, with messages naming {@code options.x}. */
final class NpcOptionsParams {
    private NpcOptionsParams() {}

    static NpcOptions read(Params p, Duration defaultToolTimeout) throws BridgeException {
        NpcOptions d = NpcOptions.defaults(defaultToolTimeout);
        ReplyFormat format = d.replyFormat();
        String formatText = p.optionalString("replyFormat");
        if (formatText != null) {
            format = switch (formatText) {
                case "automatic" -> ReplyFormat.AUTOMATIC;
                case "structured" -> ReplyFormat.STRUCTURED;
                case "text" -> ReplyFormat.TEXT;
                default -> throw p.mistyped("replyFormat", "\"automatic\", \"structured\" or \"text\"");
            };
        }
        String grounding = p.optionalString("groundingTool");
        ToolChoice choice = Options.toolChoice(p, "toolChoice");
        Integer rounds = p.optionalInt("maxToolRounds", 0);
        Integer calls = p.optionalInt("maxToolCalls", 0);
        Duration timeout = p.optionalSeconds("toolTimeoutSeconds");
        List<String> readable = paths(p, "worldReadable");
        List<String> writable = paths(p, "worldWritable");
        List<String> contextPaths = paths(p, "worldContextPaths");
        boolean remember = d.rememberFact();
        boolean change = d.changeRelationship();
        JsonNode memoryTools = p.get("memoryTools");
        if (memoryTools != null) {
            if (memoryTools.isTextual() && memoryTools.textValue().equals("all")) {
                remember = true;
                change = true;
            } else if (memoryTools.isTextual() && memoryTools.textValue().equals("none")) {
                remember = false;
                change = false;
            } else if (memoryTools.isArray()) {
                remember = false;
                change = false;
                for (JsonNode item : memoryTools) {
                    String name = item.isTextual() ? item.textValue() : "";
                    switch (name) {
                        case "rememberFact" -> remember = true;
                        case "changeRelationship" -> change = true;
                        default ->
                            throw p.mistyped(
                                    "memoryTools",
                                    "\"all\", \"none\" or a list of \"rememberFact\" and \"changeRelationship\"");
                    }
                }
            } else {
                throw p.mistyped(
                        "memoryTools", "\"all\", \"none\" or a list of \"rememberFact\" and \"changeRelationship\"");
            }
        }
        Integer maxFacts = p.optionalInt("maxFacts", 0);
        Integer maxChange = p.optionalInt("maxRelationshipChange", 0);
        Integer unlock = d.secretsUnlockAtRelationship();
        if (p.containsKey("secretsUnlockAtRelationship")) {
            JsonNode value = p.json().get("secretsUnlockAtRelationship");
            if (value.isNull()) {
                unlock = null;
            } else {
                if (!value.isIntegralNumber()
                        || !value.canConvertToInt()
                        || value.intValue() < -100
                        || value.intValue() > 100) {
                    throw p.mistyped("secretsUnlockAtRelationship", "an integer from -100 to 100, or null");
                }
                unlock = value.intValue();
            }
        }
        List<Emotion> emotions = d.emotions();
        List<String> emotionNames = p.optionalStringList("emotions");
        if (emotionNames != null) {
            List<Emotion> parsed = new ArrayList<>();
            for (String name : emotionNames) {
                Emotion emotion = Emotion.of(name)
                        .orElseThrow(() -> p.mistyped(
                                "emotions",
                                "a non-empty list of emotions ("
                                        + String.join(
                                                ", ",
                                                java.util.Arrays.stream(Emotion.values())
                                                        .map(Emotion::wireName)
                                                        .toList())
                                        + ")"));
                if (!parsed.contains(emotion)) {
                    parsed.add(emotion);
                }
            }
            if (parsed.isEmpty()) {
                throw p.mistyped("emotions", "a non-empty list of emotions");
            }
            emotions = parsed;
        }
        Integer optionCount = p.optionalInt("playerOptionCount", 0);
        if (optionCount != null && optionCount > NpcOptions.MAX_PLAYER_OPTIONS) {
            throw p.mistyped("playerOptionCount", "an integer from 0 to " + NpcOptions.MAX_PLAYER_OPTIONS);
        }
        Boolean canEnd = p.optionalBool("canEndConversation");
        String extra = p.optionalString("extraInstructions");
        Integer compactAfter = p.optionalInt("compactAfterTurns", 0);
        Integer keep = p.optionalInt("keepRecentTurns", 0);
        Boolean fallbackOnGuardrail = p.optionalBool("fallbackOnGuardrail");
        List<String> fallbackLines = p.optionalStringList("fallbackLines");
        Double temperature = p.optionalNumber("temperature", 0);
        Integer maxTokens = p.optionalInt("maximumResponseTokens", 1);
        Integer barkTokens = p.optionalInt("barkMaximumTokens", 1);
        Sampling sampling = Options.sampling(p);
        return new NpcOptions(
                format,
                grounding,
                choice != null ? choice : d.toolChoice(),
                rounds != null ? rounds : d.maxToolRounds(),
                calls != null ? calls : d.maxToolCalls(),
                timeout != null ? timeout : d.toolTimeout(),
                readable != null ? readable : d.worldReadable(),
                writable != null ? writable : d.worldWritable(),
                contextPaths != null ? contextPaths : d.worldContextPaths(),
                remember,
                change,
                maxFacts != null ? maxFacts : d.maxFacts(),
                maxChange != null ? maxChange : d.maxRelationshipChange(),
                unlock,
                emotions,
                optionCount != null ? optionCount : d.playerOptionCount(),
                canEnd != null ? canEnd : d.canEndConversation(),
                extra,
                compactAfter != null ? compactAfter : d.compactAfterTurns(),
                keep != null ? keep : d.keepRecentTurns(),
                fallbackOnGuardrail != null ? fallbackOnGuardrail : d.fallbackOnGuardrail(),
                fallbackLines != null ? fallbackLines : d.fallbackLines(),
                temperature,
                maxTokens,
                barkTokens != null ? barkTokens : d.barkMaximumTokens(),
                sampling);
    }

    private static List<String> paths(Params p, String name) throws BridgeException {
        List<String> paths = p.optionalStringList(name);
        if (paths != null) {
            for (String path : paths) {
                try {
                    dev.oam.game.world.WorldPath.parse(path);
                } catch (dev.oam.game.world.WorldException e) {
                    throw BridgeException.invalidParams("Parameter '" + p.path(name) + "' has a malformed world path '"
                            + path + "': " + e.getMessage());
                }
            }
        }
        return paths;
    }

    static ObjectNode write(NpcOptions o) {
        ObjectNode node = Json.object();
        node.put("replyFormat", o.replyFormat().wireName());
        if (o.groundingTool() != null) {
            node.put("groundingTool", o.groundingTool());
        } else {
            node.putNull("groundingTool");
        }
        node.set("toolChoice", toolChoice(o.toolChoice()));
        node.put("maxToolRounds", o.maxToolRounds());
        node.put("maxToolCalls", o.maxToolCalls());
        node.put("toolTimeoutSeconds", Durations.secondsValue(o.toolTimeout()));
        node.set("worldReadable", Json.strings(o.worldReadable()));
        node.set("worldWritable", Json.strings(o.worldWritable()));
        node.set("worldContextPaths", Json.strings(o.worldContextPaths()));
        ArrayNode memoryTools = node.putArray("memoryTools");
        if (o.rememberFact()) {
            memoryTools.add("rememberFact");
        }
        if (o.changeRelationship()) {
            memoryTools.add("changeRelationship");
        }
        node.put("maxFacts", o.maxFacts());
        node.put("maxRelationshipChange", o.maxRelationshipChange());
        if (o.secretsUnlockAtRelationship() == null) {
            node.putNull("secretsUnlockAtRelationship");
        } else {
            node.put("secretsUnlockAtRelationship", o.secretsUnlockAtRelationship());
        }
        node.set(
                "emotions",
                Json.strings(o.emotions().stream().map(Emotion::wireName).toList()));
        node.put("playerOptionCount", o.playerOptionCount());
        node.put("canEndConversation", o.canEndConversation());
        if (o.extraInstructions() != null) {
            node.put("extraInstructions", o.extraInstructions());
        } else {
            node.putNull("extraInstructions");
        }
        node.put("compactAfterTurns", o.compactAfterTurns());
        node.put("keepRecentTurns", o.keepRecentTurns());
        node.put("fallbackOnGuardrail", o.fallbackOnGuardrail());
        node.set("fallbackLines", Json.strings(o.fallbackLines()));
        if (o.temperature() != null) {
            node.put("temperature", o.temperature());
        } else {
            node.putNull("temperature");
        }
        if (o.maximumResponseTokens() != null) {
            node.put("maximumResponseTokens", o.maximumResponseTokens());
        } else {
            node.putNull("maximumResponseTokens");
        }
        node.put("barkMaximumTokens", o.barkMaximumTokens());
        switch (o.sampling()) {
            case null -> {}
            case Sampling.Greedy g -> node.put("sampling", "greedy");
            case Sampling.TopK k -> {
                ObjectNode s = node.putObject("sampling").put("topK", k.k());
                if (k.seed() != null) {
                    s.put("seed", k.seed());
                }
            }
            case Sampling.TopP p -> {
                ObjectNode s = node.putObject("sampling").put("topP", p.p());
                if (p.seed() != null) {
                    s.put("seed", p.seed());
                }
            }
            case Sampling.Chain c -> node.set("sampler", SamplerCodec.write(c));
        }
        return node;
    }

    static JsonNode toolChoice(ToolChoice choice) {
        return switch (choice) {
            case ToolChoice.Auto a -> Json.mapper().getNodeFactory().textNode("auto");
            case ToolChoice.None n -> Json.mapper().getNodeFactory().textNode("none");
            case ToolChoice.Required r -> Json.mapper().getNodeFactory().textNode("required");
            case ToolChoice.Explicit e -> Json.mapper().getNodeFactory().textNode("explicit");
            case ToolChoice.Named named -> Json.object().put("tool", named.tool());
        };
    }

    /** RFC 7386: objects merge recursively, {@code null} removes, anything else replaces. */
    static JsonNode mergePatch(JsonNode target, JsonNode patch) {
        if (!patch.isObject()) {
            return patch.deepCopy();
        }
        ObjectNode result = target != null && target.isObject() ? ((ObjectNode) target).deepCopy() : Json.object();
        for (Iterator<Map.Entry<String, JsonNode>> it = patch.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> field = it.next();
            if (field.getValue().isNull()) {
                result.remove(field.getKey());
            } else {
                result.set(field.getKey(), mergePatch(result.get(field.getKey()), field.getValue()));
            }
        }
        return result;
    }
}
