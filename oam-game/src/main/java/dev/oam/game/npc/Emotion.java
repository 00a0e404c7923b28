package dev.oam.game.npc;

import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/** The sixteen NPC emotions, with their lenient matching (docs/GAMES.md, "Emotions and spoken lines"). */
public enum Emotion {
    NEUTRAL,
    HAPPY,
    SAD,
    ANGRY,
    AFRAID,
    SURPRISED,
    SUSPICIOUS,
    AMUSED,
    DISGUSTED,
    EXCITED,
    CURIOUS,
    CONFUSED,
    WORRIED,
    GRATEFUL,
    ANNOYED,
    PROUD;

    private static final Map<String, Emotion> SYNONYMS = new HashMap<>();

    static {
        synonyms(NEUTRAL, "calm", "content", "indifferent", "bored");
        synonyms(HAPPY, "joyful", "glad", "cheerful", "pleased", "friendly", "warm");
        synonyms(SAD, "unhappy", "sorrowful", "melancholy", "grieving");
        synonyms(ANGRY, "mad", "furious", "enraged", "hostile");
        synonyms(AFRAID, "scared", "fearful", "frightened", "terrified");
        synonyms(WORRIED, "nervous", "anxious", "concerned");
        synonyms(SURPRISED, "shocked", "astonished", "startled");
        synonyms(SUSPICIOUS, "wary", "distrustful", "skeptical", "sceptical");
        synonyms(AMUSED, "amusement", "playful", "laughing");
        synonyms(DISGUSTED, "disgust", "revolted");
        synonyms(EXCITED, "eager", "thrilled", "enthusiastic");
        synonyms(CURIOUS, "interested", "intrigued");
        synonyms(CONFUSED, "puzzled", "uncertain");
        synonyms(GRATEFUL, "thankful");
        synonyms(ANNOYED, "irritated", "grumpy", "impatient", "gruff");
        synonyms(PROUD, "confident", "smug");
    }

    private static void synonyms(Emotion emotion, String... words) {
        for (String word : words) {
            SYNONYMS.put(word, emotion);
        }
    }

    /** The wire name, e.g. {@code "happy"}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Exact wire name only (for validating parameters). */
    public static Optional<Emotion> of(String name) {
        for (Emotion emotion : values()) {
            if (emotion.wireName().equals(name)) {
                return Optional.of(emotion);
            }
        }
        return Optional.empty();
    }

    /** Lenient: lowercased, non-letters stripped from both ends, then exact names, then synonyms. */
    public static Optional<Emotion> match(String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        int start = 0;
        int end = lower.length();
        while (start < end && !Character.isLetter(lower.charAt(start))) {
            start++;
        }
        while (end > start && !Character.isLetter(lower.charAt(end - 1))) {
            end--;
        }
        String word = lower.substring(start, end);
        Optional<Emotion> exact = of(word);
        return exact.isPresent() ? exact : Optional.ofNullable(SYNONYMS.get(word));
    }
}
