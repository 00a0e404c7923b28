package dev.oam.game.npc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class NpcPromptsTest {
    private final Persona gorm = new Persona(
            "Gorm",
            "the village blacksmith",
            "Gruff but fair",
            "Short words!",
            "Forged for the king",
            List.of(" Sell swords. ", "Find an apprentice."),
            List.of("Iron costs 5 gold"),
            List.of("He owes the baron money."),
            Emotion.NEUTRAL,
            2);
    private final NpcOptions defaults = NpcOptions.defaults(Duration.ofSeconds(120));

    @Test
    void instructionsFollowThePersonaBlockThenTheRules() {
        String text =
                NpcPrompts.instructions(gorm, defaults, true, NpcPrompts.SecretVisibility.HIDDEN, false, false, false);
        List<String> lines = text.lines().toList();
        assertThat(lines.get(0)).isEqualTo("You play Gorm, the village blacksmith, a character in a video game.");
        assertThat(lines)
                .contains(
                        "Personality: Gruff but fair.",
                        "Speaking style: Short words!",
                        "Background: Forged for the king.",
                        "Goals: Sell swords; Find an apprentice.",
                        "You know: Iron costs 5 gold.",
                        "Rules:");
        assertThat(text)
                .doesNotContain("baron")
                .contains("at most 2 short sentences")
                .contains("Use your tools");
        assertThat(lines.indexOf("Rules:")).isGreaterThan(lines.indexOf("You know: Iron costs 5 gold."));
    }

    @Test
    void secretsFollowTheRelationshipThreshold() {
        assertThat(NpcPrompts.secrets(gorm, defaults, 49)).isEqualTo(NpcPrompts.SecretVisibility.HIDDEN);
        assertThat(NpcPrompts.secrets(gorm, defaults, 50)).isEqualTo(NpcPrompts.SecretVisibility.SHAREABLE);
        NpcOptions guarded = new NpcOptions(
                defaults.replyFormat(),
                null,
                defaults.toolChoice(),
                2,
                6,
                defaults.toolTimeout(),
                List.of(""),
                List.of(),
                List.of(),
                false,
                false,
                12,
                10,
                null,
                defaults.emotions(),
                3,
                true,
                null,
                8,
                2,
                true,
                List.of(),
                null,
                null,
                48,
                null);
        assertThat(NpcPrompts.secrets(gorm, guarded, -100)).isEqualTo(NpcPrompts.SecretVisibility.GUARDED);
        String shareable =
                NpcPrompts.instructions(gorm, defaults, false, NpcPrompts.SecretVisibility.SHAREABLE, true, true, true);
        assertThat(shareable)
                .contains("Your secret: He owes the baron money.")
                .contains("earned your trust")
                .contains("remember_fact")
                .contains("change_relationship")
                .contains("square brackets")
                .contains("If you do not know a fact");
        assertThat(NpcPrompts.instructions(
                        Persona.named("Ann"), defaults, false, NpcPrompts.SecretVisibility.HIDDEN, false, false, false))
                .startsWith("You play Ann, a character in a video game.");
    }

    @Test
    void theMemoryNoteAndThePrompt() {
        assertThat(NpcPrompts.memoryNote(Memory.EMPTY, false)).isNull();
        assertThat(NpcPrompts.memoryNote(new Memory(List.of("Aria likes axes."), 25, "They met."), false))
                .isEqualTo("Memory:\n- You feel friendly toward the player (25 on a scale from -100 to 100).\n"
                        + "- You remember: Aria likes axes.\n- Earlier conversation: They met.");
        assertThat(NpcPrompts.memoryNote(Memory.EMPTY, true)).contains("neutral toward the player (0");
        assertThat(NpcPrompts.prompt("player.gold: 45", "The player just paid.", "Thanks"))
                .isEqualTo("Game state:\nplayer.gold: 45\nSituation: The player just paid.\nPlayer: Thanks");
        assertThat(NpcPrompts.prompt(null, null, " ")).isEqualTo("Player: (The player says nothing.)");
        assertThat(List.of(-61, -60, -21, -20, 20, 21, 60, 61).stream()
                        .map(Memory::attitude)
                        .toList())
                .containsExactly(
                        "hostile",
                        "unfriendly",
                        "unfriendly",
                        "neutral",
                        "neutral",
                        "friendly",
                        "friendly",
                        "trusting");
    }

    @Test
    void theReplySchemaPutsEmotionFirst() {
        var schema = NpcPrompts.replySchema(gorm, defaults);
        assertThat(schema.path("properties").properties().stream()
                        .map(java.util.Map.Entry::getKey)
                        .toList())
                .containsExactly("emotion", "line", "player_options", "ends_conversation");
        assertThat(schema.path("properties")
                        .path("player_options")
                        .path("minItems")
                        .asInt())
                .isEqualTo(3);
        assertThat(schema.path("additionalProperties").asBoolean(true)).isFalse();
    }

    @Test
    void emotionsMatchLeniently() {
        assertThat(Emotion.match("  Gruff!! ")).contains(Emotion.ANNOYED);
        assertThat(Emotion.match("HAPPY")).contains(Emotion.HAPPY);
        assertThat(Emotion.match("sceptical")).contains(Emotion.SUSPICIOUS);
        assertThat(Emotion.match("zen")).isEmpty();
    }

    @Test
    void spokenLinesAreCleaned() {
        assertThat(Replies.cleanLine("  Gorm: \"Aye.\" ", "Gorm")).isEqualTo("Aye.");
        assertThat(Replies.cleanLine("**Gorm**: Aye.", "Gorm")).isEqualTo("Aye.");
        assertThat(Replies.cleanLine("gorm says: “Hm.”", "Gorm")).isEqualTo("Hm.");
        assertThat(Replies.cleanLine("\"He said \"no\" twice\"", "Gorm")).isEqualTo("\"He said \"no\" twice\"");
        assertThat(Replies.splitTag("[gruff] Hmph.")).isEqualTo(new Replies.TextSplit("gruff", "Hmph.", false));
        assertThat(Replies.splitTag("[gru").tagStreaming()).isTrue();
        assertThat(Replies.splitTag("[" + "x".repeat(30)).tagStreaming()).isFalse();
        assertThat(Replies.bark("\n\n Gorm: Rain.\nMore", "Gorm")).isEqualTo("Rain.");
        assertThat(Replies.streamingLine("Gor", "Gorm")).isEmpty();
        assertThat(Replies.streamingLine("Gorm: \"Aye", "Gorm")).isEqualTo("Aye");
    }

    @Test
    void trackerEventsReplayToTheFinalLine() {
        StringBuilder shown = new StringBuilder();
        List<LineTracker.Event> events = new java.util.ArrayList<>();
        LineTracker tracker = new LineTracker(gorm, event -> {
            events.add(event);
            if (event instanceof LineTracker.Event.LineDelta d) {
                shown.append(d.delta());
            } else if (event instanceof LineTracker.Event.LineReset r) {
                shown.setLength(0);
                shown.append(r.line());
            }
        });
        tracker.text("[hap");
        tracker.text("[happy] Go");
        tracker.text("[happy] Gorm: \"Good");
        tracker.text("[happy] Gorm: \"Good day.\"");
        tracker.finish(Emotion.HAPPY, "Good day.");
        assertThat(shown.toString()).isEqualTo("Good day.");
        assertThat(events.get(0)).isEqualTo(new LineTracker.Event.EmotionChanged(Emotion.HAPPY));
        assertThat(events)
                .filteredOn(e -> e instanceof LineTracker.Event.EmotionChanged)
                .hasSize(1);
    }

    @Test
    void memoryToolsStageAndClamp() {
        MemoryTools tools = new MemoryTools(true, true, 10, 2, new Memory(List.of("a"), 95, null));
        var json = dev.oam.core.json.Json.mapper();
        assertThat(tools.execute(new dev.oam.core.tool.ToolCall(
                                "1", "remember_fact", json.createObjectNode().put("fact", "A!")))
                        .modelText())
                .isEqualTo("You already know that.");
        tools.execute(new dev.oam.core.tool.ToolCall(
                "2", "remember_fact", json.createObjectNode().put("fact", "b")));
        tools.execute(new dev.oam.core.tool.ToolCall(
                "3", "remember_fact", json.createObjectNode().put("fact", "c")));
        assertThat(tools.execute(new dev.oam.core.tool.ToolCall(
                                "4",
                                "change_relationship",
                                json.createObjectNode().put("reason", "x").put("delta", 50)))
                        .modelText())
                .contains("(100)");
        Memory committed = tools.committed();
        assertThat(committed.facts()).containsExactly("b", "c");
        assertThat(committed.relationship()).isEqualTo(100);
        tools.discard();
        assertThat(tools.committed()).isEqualTo(new Memory(List.of("a"), 95, null));
    }
}
