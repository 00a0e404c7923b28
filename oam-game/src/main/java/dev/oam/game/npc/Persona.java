package dev.oam.game.npc;

import java.util.List;
import java.util.Objects;

/** Who an NPC is (PROTOCOL.md §6 persona table). Only {@code name} is required. */
public record Persona(
        String name,
        String role,
        String personality,
        String speakingStyle,
        String backstory,
        List<String> goals,
        List<String> knowledge,
        List<String> secrets,
        Emotion defaultEmotion,
        int maxSentences) {

    public Persona {
        Objects.requireNonNull(name, "name");
        if (name.isBlank()) {
            throw new IllegalArgumentException("a persona needs a name");
        }
        goals = List.copyOf(goals);
        knowledge = List.copyOf(knowledge);
        secrets = List.copyOf(secrets);
    }

    public static Persona named(String name) {
        return new Persona(name, "", "", "", "", List.of(), List.of(), List.of(), Emotion.NEUTRAL, 2);
    }
}
