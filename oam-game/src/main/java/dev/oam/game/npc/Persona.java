package dev.oam.game.npc;

import java.util.List;
import java.util.Objects;

/** Who an NPC is (docs/GAMES.md, "Persona and options"). Only {@code name} is required. */
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

    /** A builder starting from {@link #named(String)}. */
    public static Builder builder(String name) {
        return named(name).toBuilder();
    }

    /** A builder starting from these values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Sets the persona by name instead of by position: {@code Persona.builder("Mira").role("innkeeper")
     * .goals(List.of("keep the peace")).build()}, starting from {@link #named(String)} (or {@link #toBuilder()}).
     */
    public static final class Builder {
        private String name;
        private String role;
        private String personality;
        private String speakingStyle;
        private String backstory;
        private List<String> goals;
        private List<String> knowledge;
        private List<String> secrets;
        private Emotion defaultEmotion;
        private int maxSentences;

        private Builder(Persona from) {
            this.name = from.name();
            this.role = from.role();
            this.personality = from.personality();
            this.speakingStyle = from.speakingStyle();
            this.backstory = from.backstory();
            this.goals = from.goals();
            this.knowledge = from.knowledge();
            this.secrets = from.secrets();
            this.defaultEmotion = from.defaultEmotion();
            this.maxSentences = from.maxSentences();
        }

        public Builder name(String name) {
            this.name = name;
            return this;
        }

        public Builder role(String role) {
            this.role = role;
            return this;
        }

        public Builder personality(String personality) {
            this.personality = personality;
            return this;
        }

        public Builder speakingStyle(String speakingStyle) {
            this.speakingStyle = speakingStyle;
            return this;
        }

        public Builder backstory(String backstory) {
            this.backstory = backstory;
            return this;
        }

        public Builder goals(List<String> goals) {
            this.goals = goals;
            return this;
        }

        public Builder knowledge(List<String> knowledge) {
            this.knowledge = knowledge;
            return this;
        }

        public Builder secrets(List<String> secrets) {
            this.secrets = secrets;
            return this;
        }

        public Builder defaultEmotion(Emotion defaultEmotion) {
            this.defaultEmotion = defaultEmotion;
            return this;
        }

        public Builder maxSentences(int maxSentences) {
            this.maxSentences = maxSentences;
            return this;
        }

        /** @throws IllegalArgumentException when a value is out of range (as the record's constructor checks) */
        public Persona build() {
            return new Persona(
                    name,
                    role,
                    personality,
                    speakingStyle,
                    backstory,
                    goals,
                    knowledge,
                    secrets,
                    defaultEmotion,
                    maxSentences);
        }
    }
}
