package dev.oam.game.npc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.json.Json;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a game receives of a model's NPC reply when the small model loops or writes its JSON's own words. */
class RepliesTest {
    private static Replies.Reply said(String line) {
        return new Replies.Reply(Emotion.NEUTRAL, line, List.of(), false);
    }

    @Test
    void thePlayersLineReadBackIsTakenOutOfTheNpcsLine() {
        String asked = "How much is an iron sword?";
        assertThat(Replies.withoutPlayerLine(said("Gorm, how much is an iron sword? Forty-five gold."), asked, "Gorm")
                        .line())
                .isEqualTo("Forty-five gold.");
        assertThat(Replies.withoutPlayerLine(said("How much is an iron sword?"), asked, "Gorm")
                        .line())
                .as("nothing left: the fallback line")
                .isEmpty();
        assertThat(Replies.withoutPlayerLine(said("Forty-five gold for an iron sword."), asked, "Gorm")
                        .line())
                .isEqualTo("Forty-five gold for an iron sword.");
        assertThat(Replies.withoutPlayerLine(said("Good morning!"), "Good morning!", "Gorm")
                        .line())
                .as("a short greeting said back is a reply")
                .isEqualTo("Good morning!");
    }

    @Test
    void repeatedSentencesAndATrailingRestartAreSpokenOnce() {
        assertThat(Replies.withoutRepeats("I'm so glad I'm alive. I'm so glad I'm alive. I'm so glad I'm alive. I'm"))
                .isEqualTo("I'm so glad I'm alive.");
        assertThat(Replies.withoutRepeats("The sword is 45 gold. We have 3 left! The sword is 45 gold."))
                .isEqualTo("The sword is 45 gold. We have 3 left!");
        assertThat(Replies.withoutRepeats("Welcome, traveller. What brings you here?"))
                .isEqualTo("Welcome, traveller. What brings you here?");
        assertThat(Replies.withoutRepeats("No punctuation at all")).isEqualTo("No punctuation at all");
    }

    @Test
    void playerOptionsThatAreTheReplysOwnWordsOrTheLineAreLeftOut() throws Exception {
        Persona persona = Persona.builder("Gorm").build();
        NpcOptions options = NpcOptions.defaults(java.time.Duration.ofSeconds(120));
        Replies.Reply reply = Replies.structured(Json.parse("""
                {"emotion":"happy","line":"The sword is 45 gold.","player_options":["player_options","maxItems","true","happy",
                 "The sword is 45 gold.","I'll take it.","Too expensive."]}"""), persona, options);
        assertThat(reply.playerOptions()).containsExactly("I'll take it.", "Too expensive.");
    }

    @Test
    void playerOptionsThatAreIdentifiersOrTheNextKeyAreLeftOut() throws Exception {
        // What SmolLM2-135M wrote as options once mood words could not fit its grammar.
        Persona persona = Persona.builder("Gorm").build();
        NpcOptions options = NpcOptions.defaults(java.time.Duration.ofSeconds(120));
        Replies.Reply reply = Replies.structured(Json.parse("""
                {"emotion":"happy","line":"The sword is 45 gold. It is fine steel.","player_options":["happy_player_options_1",
                 "ends_conversation: true","Line: hello there","What about a shield?","It is fine steel.","A","A fine_blade indeed."]}"""), persona, options);
        // "A" is in the line too, but a short option is no sentence read back (the C# binding's test uses A, B, C)
        assertThat(reply.playerOptions()).containsExactly("What about a shield?", "A", "A fine_blade indeed.");
    }
}
