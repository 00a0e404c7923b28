package dev.oam.bridge.game;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.Params;
import dev.oam.core.json.Json;
import dev.oam.game.npc.Emotion;
import dev.oam.game.npc.Persona;
import java.util.ArrayList;
import java.util.List;

/** Reads and writes persona objects; errors name the field ({@code 'persona.name'}). */
final class PersonaParams {
    private PersonaParams() {}

    /**
     * Reads a persona from {@code params} (a nested {@code persona} object, or an actor); unknown fields stay for
     * warnings.
     */
    static Persona read(Params persona) throws BridgeException {
        String name = persona.string("name").strip();
        if (name.isEmpty()) {
            throw BridgeException.invalidParams("Parameter '" + persona.path("name") + "' must not be empty.");
        }
        Emotion defaultEmotion = Emotion.NEUTRAL;
        String emotion = persona.optionalString("defaultEmotion");
        if (emotion != null) {
            defaultEmotion = Emotion.of(emotion)
                    .orElseThrow(() -> persona.mistyped(
                            "defaultEmotion",
                            "one of the emotions "
                                    + String.join(
                                            ", ",
                                            java.util.Arrays.stream(Emotion.values())
                                                    .map(Emotion::wireName)
                                                    .toList())));
        }
        Integer maxSentences = persona.optionalInt("maxSentences", 1);
        return new Persona(
                name,
                text(persona, "role"),
                text(persona, "personality"),
                text(persona, "speakingStyle"),
                text(persona, "backstory"),
                list(persona, "goals"),
                list(persona, "knowledge"),
                list(persona, "secrets"),
                defaultEmotion,
                maxSentences == null ? 2 : maxSentences);
    }

    private static String text(Params params, String name) throws BridgeException {
        String value = params.optionalString(name);
        return value == null ? "" : value;
    }

    private static List<String> list(Params params, String name) throws BridgeException {
        List<String> value = params.optionalStringList(name);
        return value == null ? List.of() : new ArrayList<>(value);
    }

    static ObjectNode write(Persona persona) {
        ObjectNode node = Json.object();
        node.put("name", persona.name());
        node.put("role", persona.role());
        node.put("personality", persona.personality());
        node.put("speakingStyle", persona.speakingStyle());
        node.put("backstory", persona.backstory());
        node.set("goals", Json.strings(persona.goals()));
        node.set("knowledge", Json.strings(persona.knowledge()));
        node.set("secrets", Json.strings(persona.secrets()));
        node.put("defaultEmotion", persona.defaultEmotion().wireName());
        node.put("maxSentences", persona.maxSentences());
        return node;
    }

    static boolean isPersona(JsonNode node) {
        return node != null && node.isObject();
    }
}
