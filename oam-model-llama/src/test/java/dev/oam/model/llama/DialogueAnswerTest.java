package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.prompt;
import static dev.oam.model.llama.Fixtures.request;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.DialogueForm;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.model.llama.prompt.ChatMessage;
import dev.oam.model.llama.prompt.ChatPrompt;
import dev.oam.model.llama.prompt.DialogueAnswer;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** An answer spoken by a character: written as a line of dialogue, read back into the schema's object or the line. */
class DialogueAnswerTest {
    private static final String REPLY_SCHEMA = """
            {"type": "object", "properties": {
              "emotion": {"type": "string", "enum": ["neutral", "happy", "angry"]},
              "line": {"type": "string"},
              "player_options": {"type": "array", "items": {"type": "string"}, "minItems": 3, "maxItems": 3},
              "ends_conversation": {"type": "boolean"}},
             "required": ["emotion", "line", "player_options", "ends_conversation"], "additionalProperties": false}""";
    private static final String WRITTEN = """
            Gorm (happy): "Three iron swords, 45 gold each. Fine steel!"
            Player: "I will take one, then." | "Anything cheaper than that?" | "Maybe later, thank you."
            Ends the conversation: no""";
    private static final GenerationSchema SCHEMA = schema();

    private static GenerationSchema schema() {
        try {
            // As a game method holds the model to it: the floor on replies added to the converted schema.
            GenerationSchema converted = GenerationSchema.convert(Json.parse(REPLY_SCHEMA), "Response");
            ObjectNode json = converted.json();
            ((ObjectNode) json.path("properties").path("player_options").path("items")).put("minLength", 12);
            return new GenerationSchema(json, converted.warnings());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static ModelRequest spoken(
            List<TranscriptEntry> entries, @Nullable GenerationSchema schema, int sentences) {
        ModelRequest plain = request(entries, List.of(), ToolCallingMode.DISALLOWED, false, schema);
        return plain.withOptions(plain.options().withDialogue(new DialogueForm("Gorm", "Player", sentences)));
    }

    @Test
    void onlyStepsSpokenByACharacterAreDialogue() {
        assertThat(DialogueAnswer.of(spoken(prompt("Hi."), SCHEMA, 2))).isNotNull();
        assertThat(DialogueAnswer.of(request(prompt("Hi."), List.of(), ToolCallingMode.DISALLOWED, false, SCHEMA)))
                .isNull();
        assertThat(DialogueAnswer.of(spoken(
                        prompt("Hi."),
                        Fixtures.schema(
                                "{\"type\": \"object\", \"properties\": " + "{\"id\": {\"type\": \"string\"}}}"),
                        2)))
                .as("no line to speak")
                .isNull();
        assertThat(DialogueAnswer.of(spoken(prompt("Hi."), null, 1)).isText()).isTrue();
    }

    @Test
    void theGrammarAllowsTheFormWithWordsAndSentenceLimitsOnly() throws Exception {
        GbnfChecker g = GbnfChecker.parse(StepGrammar.of(spoken(prompt("What do you sell?"), SCHEMA, 2), 64));
        assertThat(g.accepts(WRITTEN)).isTrue();
        assertThat(g.accepts(WRITTEN.replace("no", "yes"))).isTrue();
        assertThat(g.accepts(WRITTEN.replace("happy", "sleepy")))
                .as("mood outside the enum")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("Three iron swords", "12.2023")))
                .as("a line must open with a word")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace(" Fine steel!", " Fine steel! Come back soon.")))
                .as("two sentences at most")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("Fine steel!", "Fine steel")))
                .as("a sentence ends in . ! or ?")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("Fine steel!", "Fine steel.!")))
                .as("one mark, or an ellipsis")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("Fine steel!", "Fine steel..."))).isTrue();
        assertThat(g.accepts(WRITTEN.replace("Fine steel!", "Fine " + "steel ".repeat(20) + "!")))
                .as("a sentence's length")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace(" | \"Maybe later, thank you.\"", "")))
                .as("three replies")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("I will take one, then.", "Yes.")))
                .as("the replies' floor")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("I will take one, then.", "{Mira 2} (nun) (nun).")))
                .as("no markup")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("I will take one, then.", "\\nYou are going there.")))
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("I will take one, then.", "- I will take one.")))
                .as("opens with a word")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("I will take one, then.", "\uFF0C 10000000000000.")))
                .as("a letter first")
                .isFalse();
        assertThat(g.accepts(WRITTEN.replace("Three iron swords", "\u00DCber three iron swords")))
                .isTrue();
        assertThat(g.accepts("{\"emotion\": \"happy\", \"line\": \"Hello.\"}"))
                .as("no JSON")
                .isFalse();
        GbnfChecker one = GbnfChecker.parse(StepGrammar.of(spoken(prompt("Hi."), SCHEMA, 1), 64));
        assertThat(one.accepts(WRITTEN)).isFalse();
        assertThat(one.accepts(WRITTEN.replace(" Fine steel!", ""))).isTrue();
    }

    @Test
    void theWrittenReplyReadsBackIntoTheSchemasObjectAndIsWrittenTheSameInTheHistory() throws Exception {
        ModelRequest step = spoken(prompt("What do you sell?"), SCHEMA, 2);
        DialogueAnswer dialogue = DialogueAnswer.of(step);
        JsonNode value = dialogue.parse(WRITTEN);
        assertThat(value).isEqualTo(Json.parse("""
                {"emotion": "happy", "line": "Three iron swords, 45 gold each. Fine steel!",
                 "player_options": ["I will take one, then.", "Anything cheaper than that?", "Maybe later, thank you."],
                 "ends_conversation": false}"""));
        assertThat(SCHEMA.firstViolation(value)).isEmpty();
        assertThat(dialogue.text(value)).isEqualTo(WRITTEN);
        assertThat(dialogue.parse("{\"line\": \"Hello.\"}"))
                .as("not the form: no value")
                .isNull();
        ModelResponse answer = StepOutput.parse(WRITTEN, step, Usage.ZERO);
        assertThat(((ModelResponse.Answer) answer).structured()).isEqualTo(value);
        // The next turn shows the answer as it was written.
        List<TranscriptEntry> history = new ArrayList<>(prompt("What do you sell?"));
        history.add(TranscriptEntry.Response.structured(Json.write(value), value, "Response"));
        history.addAll(prompt("And shields?"));
        List<ChatMessage> messages = ChatPrompt.messages(spoken(history, SCHEMA, 2), Set.of());
        assertThat(messages).extracting(ChatMessage::content).contains(WRITTEN);
        assertThat(messages.get(0).content())
                .contains("Moods: neutral, happy, angry.")
                .doesNotContain("JSON", "player_options");
    }

    @Test
    void theLineStreamsAsItIsWritten() {
        List<JsonNode> partials = new ArrayList<>();
        StepStream stream = new StepStream(spoken(prompt("Hi."), SCHEMA, 2), new ModelListener() {
            @Override
            public void onPartial(JsonNode value) {
                partials.add(value);
            }
        });
        for (String piece : List.of("Gorm", " (hap", "py): \"", "Three", " iron", " swords.", "\"\nPlayer: \"I")) {
            stream.accept(piece);
        }
        assertThat(partials)
                .extracting(p -> p.path("line").asText())
                .containsExactly("", "Three", "Three iron", "Three iron swords.");
        assertThat(partials).allMatch(p -> p.path("emotion").asText().equals("happy"));
    }

    @Test
    void aTextAnswerSpokenByACharacterIsItsLineAlone() throws Exception {
        ModelRequest bark = spoken(prompt("Situation: Rain."), null, 1);
        GbnfChecker g = GbnfChecker.parse(StepGrammar.of(bark, 64));
        assertThat(g.accepts("Gorm: \"Rain again, and the forge still hot!\"")).isTrue();
        assertThat(g.accepts("Gorm: \"Rain again. The forge is hot.\""))
                .as("one sentence")
                .isFalse();
        assertThat(g.accepts("Rules:")).as("no prompt read back").isFalse();
        ModelResponse answer = StepOutput.parse("Gorm: \"Rain again!\"", bark, Usage.ZERO);
        assertThat(((ModelResponse.Answer) answer).text()).isEqualTo("Rain again!");
        assertThat(ChatPrompt.messages(bark, Set.of()).get(0).content()).doesNotContain("JSON", "Moods");
        List<String> texts = new ArrayList<>();
        StepStream stream = new StepStream(bark, new ModelListener() {
            @Override
            public void onText(String delta) {
                texts.add(delta);
            }
        });
        for (String piece : List.of("Gorm", ": \"Rain", " again", "!\"")) {
            stream.accept(piece);
        }
        assertThat(String.join("", texts)).isEqualTo("Rain again!");
    }
}
