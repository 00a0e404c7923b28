package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.prompt;
import static dev.oam.model.llama.Fixtures.request;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.Usage;
import dev.oam.core.json.Json;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.schema.DialogueForm;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.agent.ToolCallingMode;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A reply marked as dialogue: written as a line of dialogue, read back into the schema's object. */
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

    private static GenerationSchema schema(int sentences) throws Exception {
        // As a game method marks it: on the converted schema the model is held to.
        GenerationSchema converted = GenerationSchema.convert(Json.parse(REPLY_SCHEMA), "Response");
        ObjectNode json = converted.json();
        ((ObjectNode) json.path("properties").path("player_options").path("items")).put("minLength", 12); // a game's floor
        return new GenerationSchema(new DialogueForm("Gorm", "Player", sentences).mark(json), converted.warnings());
    }

    @Test
    void onlyMarkedSchemasAreDialogue() throws Exception {
        assertThat(DialogueAnswer.of(schema(2).json())).isNotNull();
        assertThat(DialogueAnswer.of(GenerationSchema.convert(Json.parse(REPLY_SCHEMA), "Response").json())).isNull();
        assertThat(DialogueForm.strip(schema(2).json()).has(DialogueForm.KEY)).isFalse();
    }

    @Test
    void theGrammarAllowsTheFormWithWordsAndSentenceLimitsOnly() throws Exception {
        GbnfChecker g = GbnfChecker.parse(StepGrammar.of(request(prompt("What do you sell?"), List.of(), ToolCallingMode.DISALLOWED,
                false, schema(2)), 64));
        assertThat(g.accepts(WRITTEN)).isTrue();
        assertThat(g.accepts(WRITTEN.replace("no", "yes"))).isTrue();
        assertThat(g.accepts(WRITTEN.replace("happy", "sleepy"))).as("mood outside the enum").isFalse();
        assertThat(g.accepts(WRITTEN.replace("Three iron swords", "12.2023"))).as("a line must open with a word").isFalse();
        assertThat(g.accepts(WRITTEN.replace(" Fine steel!", " Fine steel! Come back soon."))).as("two sentences at most").isFalse();
        assertThat(g.accepts(WRITTEN.replace("Fine steel!", "Fine steel"))).as("a sentence ends in . ! or ?").isFalse();
        assertThat(g.accepts(WRITTEN.replace(" | \"Maybe later, thank you.\"", ""))).as("three replies").isFalse();
        assertThat(g.accepts(WRITTEN.replace("I will take one, then.", "Yes."))).as("the replies' floor").isFalse();
        assertThat(g.accepts("{\"emotion\": \"happy\", \"line\": \"Hello.\"}")).as("no JSON").isFalse();
        GbnfChecker one = GbnfChecker.parse(StepGrammar.of(request(prompt("Hi."), List.of(), ToolCallingMode.DISALLOWED, false,
                schema(1)), 64));
        assertThat(one.accepts(WRITTEN)).isFalse();
        assertThat(one.accepts(WRITTEN.replace(" Fine steel!", ""))).isTrue();
    }

    @Test
    void theWrittenReplyReadsBackIntoTheSchemasObjectAndIsWrittenTheSameInTheHistory() throws Exception {
        GenerationSchema schema = schema(2);
        DialogueAnswer dialogue = DialogueAnswer.of(schema.json());
        JsonNode value = dialogue.parse(WRITTEN);
        assertThat(value).isEqualTo(Json.parse("""
                {"emotion": "happy", "line": "Three iron swords, 45 gold each. Fine steel!",
                 "player_options": ["I will take one, then.", "Anything cheaper than that?", "Maybe later, thank you."],
                 "ends_conversation": false}"""));
        assertThat(schema.firstViolation(value)).isEmpty();
        assertThat(dialogue.text(value)).isEqualTo(WRITTEN);
        assertThat(dialogue.parse("{\"line\": \"Hello.\"}")).as("not the form: no value").isNull();
        ModelResponse answer = StepOutput.parse(WRITTEN, request(prompt("What do you sell?"), List.of(), ToolCallingMode.DISALLOWED,
                false, schema), Usage.ZERO);
        assertThat(((ModelResponse.Answer) answer).structured()).isEqualTo(value);
        // The next turn shows the answer as it was written.
        List<TranscriptEntry> history = new ArrayList<>(prompt("What do you sell?"));
        history.add(TranscriptEntry.Response.structured(Json.write(value), value, "Response"));
        history.addAll(prompt("And shields?"));
        List<ChatMessage> messages = ChatPrompt.messages(request(history, List.of(), ToolCallingMode.DISALLOWED, false, schema), Set.of());
        assertThat(messages).extracting(ChatMessage::content).contains(WRITTEN);
        assertThat(messages.get(0).content()).contains("Gorm (mood): \"what you say\"").doesNotContain("JSON", "player_options");
    }

    @Test
    void theLineStreamsAsItIsWritten() throws Exception {
        GenerationSchema schema = schema(2);
        List<JsonNode> partials = new ArrayList<>();
        StepStream stream = new StepStream(request(prompt("Hi."), List.of(), ToolCallingMode.DISALLOWED, false, schema),
                new ModelListener() {
                    @Override
                    public void onPartial(JsonNode value) {
                        partials.add(value);
                    }
                });
        for (String piece : List.of("Gorm", " (hap", "py): \"", "Three", " iron", " swords.", "\"\nPlayer: \"I")) {
            stream.accept(piece);
        }
        assertThat(partials).extracting(p -> p.path("line").asText())
                .containsExactly("", "Three", "Three iron", "Three iron swords.");
        assertThat(partials).allMatch(p -> p.path("emotion").asText().equals("happy"));
    }
}
