package dev.oam.core.transcript;

import static dev.oam.core.testing.Fixtures.json;
import static dev.oam.core.testing.Fixtures.object;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptCodec.Restored;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The FoundationModels transcript form (docs/PROTOCOL.md, "The transcript format"): what is written, what is read back,
 * what is refused.
 */
class TranscriptCodecTest {
    private static final JsonNode SCHEMA = json("""
            {"type": "object", "properties": {"reasoning": {"type": "string"}, "choice": {"type": "string"}}}""");
    private static final ToolDefinition OPEN_GATE = new ToolDefinition(
            "open_gate",
            "Opens a gate.",
            object("{\"type\": \"object\", \"properties\": {\"gate\": {\"type\": \"string\"}}}"),
            null);
    private static final ToolDefinition NO_DESCRIPTION =
            new ToolDefinition("ring", null, object("{\"type\": \"object\"}"), null);

    /** One turn with a tool round, then a structured turn: every kind of entry, with fixed ids. */
    private static final List<TranscriptEntry> ENTRIES = List.of(
            new TranscriptEntry.Prompt("P1", "P1-c", "Open the north gate.", null, null),
            new TranscriptEntry.ToolCalls(
                    "T1",
                    List.of(
                            new ToolCall("call_1", "open_gate", object("{\"gate\": \"north\", \"force\": 1.50}")),
                            new ToolCall("call_2", "ring", Json.object()))),
            new TranscriptEntry.ToolOutput("O1", "O1-c", "open_gate", "call_1", "{\"opened\":false}"),
            new TranscriptEntry.ToolOutput("O2", "O2-c", "ring", "call_2", "Error: Bell cracked."),
            new TranscriptEntry.Response("R1", "R1-c", "The gate is jammed.", null, null),
            new TranscriptEntry.Prompt("P2", "P2-c", "Decide. «Ünïcödé» \uD83D\uDE00\n\"quoted\"", SCHEMA, "Decision"),
            new TranscriptEntry.Response(
                    "R2",
                    "R2-c",
                    "{\"reasoning\":\"r\",\"choice\":\"refuse\"}",
                    json("{\"reasoning\": \"r\", \"choice\": \"refuse\"}"),
                    "Decision"));

    private static ObjectNode written() {
        return TranscriptCodec.write("I", "You are a castle guard.", List.of(OPEN_GATE, NO_DESCRIPTION), ENTRIES);
    }

    private static Restored read(String text) {
        return TranscriptCodec.read(json(text), "history");
    }

    private static IllegalArgumentException readFailure(String text) {
        IllegalArgumentException error = catchThrowableOfType(IllegalArgumentException.class, () -> read(text));
        assertThat(error).as("reading %s", text).isNotNull();
        return error;
    }

    /** Restored tool definitions, as session/create builds them. */
    private static List<ToolDefinition> tools(@Nullable ArrayNode raw) {
        List<ToolDefinition> out = new ArrayList<>();
        if (raw != null) {
            for (JsonNode wrapper : raw) {
                JsonNode function = wrapper.get("function");
                out.add(new ToolDefinition(
                        function.get("name").textValue(),
                        function.has("description")
                                ? function.get("description").textValue()
                                : null,
                        (ObjectNode) function.get("parameters"),
                        null));
            }
        }
        return out;
    }

    private static ObjectNode rewrite(Restored restored) {
        return TranscriptCodec.write(
                restored.instructionsEntryId(), restored.instructions(), tools(restored.tools()), restored.entries());
    }

    // ---- writing ----

    @Test
    void writtenTranscriptHasTheFoundationModelsShape() {
        assertThat(Json.write(written())).isEqualTo(Json.write(json("""
                {"type": "FoundationModels.Transcript", "version": "1.1", "transcript": {"entries": [
                  {"id": "I", "role": "instructions",
                   "contents": [{"type": "text", "id": "I-text", "text": "You are a castle guard."}],
                   "tools": [{"type": "function", "function": {"name": "open_gate", "description": "Opens a gate.",
                                "parameters": {"type": "object", "properties": {"gate": {"type": "string"}}}}},
                             {"type": "function", "function": {"name": "ring", "parameters": {"type": "object"}}}]},
                  {"id": "P1", "role": "user", "contents": [{"type": "text", "id": "P1-c", "text": "Open the north gate."}],
                   "options": {}},
                  {"id": "T1", "role": "response", "contents": [], "assets": [],
                   "toolCalls": [{"id": "call_1", "name": "open_gate", "arguments": "{\\"gate\\":\\"north\\",\\"force\\":1.50}"},
                                 {"id": "call_2", "name": "ring", "arguments": "{}"}]},
                  {"id": "O1", "role": "tool", "toolName": "open_gate", "toolCallID": "call_1",
                   "contents": [{"type": "text", "id": "O1-c", "text": "{\\"opened\\":false}"}]},
                  {"id": "O2", "role": "tool", "toolName": "ring", "toolCallID": "call_2",
                   "contents": [{"type": "text", "id": "O2-c", "text": "Error: Bell cracked."}]},
                  {"id": "R1", "role": "response", "assets": [],
                   "contents": [{"type": "text", "id": "R1-c", "text": "The gate is jammed."}]},
                  {"id": "P2", "role": "user",
                   "contents": [{"type": "text", "id": "P2-c", "text": "Decide. «Ünïcödé» \\ud83d\\ude00\\n\\"quoted\\""}],
                   "options": {},
                   "responseFormat": {"type": "jsonSchema", "jsonSchema": {"name": "Decision", "schema":
                       {"type": "object", "properties": {"reasoning": {"type": "string"}, "choice": {"type": "string"}}}}}},
                  {"id": "R2", "role": "response", "assets": [],
                   "contents": [{"type": "structure", "id": "R2-c",
                                 "structure": {"source": "Decision", "content": {"reasoning": "r", "choice": "refuse"}}}]}
                ]}}""")));
    }

    @Test
    void withoutInstructionsOrToolsThereIsNoInstructionsEntry() {
        ObjectNode transcript = TranscriptCodec.write("I", null, List.of(), ENTRIES.subList(0, 1));

        assertThat(transcript.at("/transcript/entries")).hasSize(1);
        assertThat(transcript.at("/transcript/entries/0/role").textValue()).isEqualTo("user");
    }

    @Test
    void toolsWithoutInstructionsGiveAnInstructionsEntryWithoutContents() {
        ObjectNode transcript = TranscriptCodec.write("I", null, List.of(NO_DESCRIPTION), List.of());

        assertThat(Json.write(transcript.at("/transcript/entries/0")))
                .isEqualTo("{\"id\":\"I\",\"role\":\"instructions\",\"contents\":[],\"tools\":[{\"type\":\"function\","
                        + "\"function\":{\"name\":\"ring\",\"parameters\":{\"type\":\"object\"}}}]}");
    }

    @Test
    void unnamedSchemaIsWrittenAsResponse() {
        ObjectNode transcript = TranscriptCodec.write(
                "I",
                null,
                List.of(),
                List.of(
                        new TranscriptEntry.Prompt("P", "Pc", "Decide.", SCHEMA, null),
                        new TranscriptEntry.Response("R", "Rc", "1", json("1"), null)));

        assertThat(transcript
                        .at("/transcript/entries/0/responseFormat/jsonSchema/name")
                        .textValue())
                .isEqualTo("Response");
        assertThat(transcript
                        .at("/transcript/entries/1/contents/0/structure/source")
                        .textValue())
                .isEqualTo("Response");
    }

    // ---- round trip ----

    @Test
    void writeReadWriteIsIdentical() {
        ObjectNode first = written();

        Restored restored = TranscriptCodec.read(first, "history");

        assertThat(Json.write(rewrite(restored))).isEqualTo(Json.write(first));
    }

    @Test
    void readingRestoresTheSameEntriesInstructionsAndTools() {
        Restored restored = TranscriptCodec.read(written(), "history");

        assertThat(restored.hasInstructionsEntry()).isTrue();
        assertThat(restored.instructionsEntryId()).isEqualTo("I");
        assertThat(restored.instructions()).isEqualTo("You are a castle guard.");
        assertThat(tools(restored.tools())).extracting(ToolDefinition::name).containsExactly("open_gate", "ring");
        assertThat(tools(restored.tools()).get(0).parameters()).isEqualTo(OPEN_GATE.parameters());
        assertThat(restored.entries()).isEqualTo(ENTRIES);
    }

    @Test
    void roundTripThroughTextIsIdenticalToo() throws Exception {
        String text = Json.write(written());

        Restored restored = TranscriptCodec.read(Json.parse(text), "history");

        assertThat(Json.write(rewrite(restored))).isEqualTo(text);
        assertThat(restored.entries()).isEqualTo(ENTRIES);
    }

    @Test
    void transcriptWithoutAnInstructionsEntryRoundTrips() {
        ObjectNode first = TranscriptCodec.write("I", null, List.of(), ENTRIES);

        Restored restored = TranscriptCodec.read(first, "history");

        assertThat(restored.hasInstructionsEntry()).isFalse();
        assertThat(restored.instructions()).isNull();
        assertThat(restored.tools()).isNull();
        assertThat(restored.instructionsEntryId()).isNotEqualTo("I");
        assertThat(Json.write(rewrite(restored))).isEqualTo(Json.write(first));
    }

    @Test
    void emptyInstructionsAreKeptAsEmptyNotAbsent() {
        Restored restored = TranscriptCodec.read(TranscriptCodec.write("I", "", List.of(), List.of()), "history");

        assertThat(restored.hasInstructionsEntry()).isTrue();
        assertThat(restored.instructions()).isEmpty();
        assertThat(restored.tools()).isEmpty();
    }

    // ---- the forms that are read ----

    @Test
    void wholeResultValueAndBareEntriesFormsReadTheSame() {
        ObjectNode value = written();
        ObjectNode wholeResult = Json.object();
        wholeResult.put("session", "guard");
        wholeResult.set("transcript", value);
        JsonNode bare = value.get("transcript");

        List<Restored> forms = List.of(
                TranscriptCodec.read(wholeResult, "history"),
                TranscriptCodec.read(value, "history"),
                TranscriptCodec.read(bare, "history"));

        assertThat(forms).allSatisfy(restored -> {
            assertThat(restored.entries()).isEqualTo(ENTRIES);
            assertThat(restored.instructions()).isEqualTo("You are a castle guard.");
            assertThat(restored.instructionsEntryId()).isEqualTo("I");
        });
    }

    @Test
    void errorPathsFollowTheFormThatWasSent() {
        String entry = "{\"id\": \"x\", \"contents\": []}";
        String bare = "{\"entries\": [" + entry + "]}";
        String value =
                "{\"type\": \"FoundationModels.Transcript\", \"version\": \"1.1\", \"transcript\": " + bare + "}";
        String whole = "{\"session\": \"s1\", \"transcript\": " + value + "}";

        assertThat(readFailure(bare)).hasMessage("Missing required parameter 'history.entries[0].role'.");
        assertThat(readFailure(value)).hasMessage("Missing required parameter 'history.transcript.entries[0].role'.");
        assertThat(readFailure(whole))
                .hasMessage("Missing required parameter 'history.transcript.transcript.entries[0].role'.");
    }

    @ParameterizedTest
    @ValueSource(strings = {"\"1\"", "\"1.1\"", "\"1.0\"", "1", "1.1", "null"})
    void versionsOneAndOnePointOneAreRead(String version) {
        Restored restored = read("{\"type\": \"FoundationModels.Transcript\", \"version\": " + version
                + ", \"transcript\": {\"entries\": []}}");

        assertThat(restored.entries()).isEmpty();
    }

    @Test
    void headerWithoutTypeAndVersionIsRead() {
        assertThat(read("{\"transcript\": {\"entries\": []}}").entries()).isEmpty();
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            "2"     | Parameter 'history.version' must be "1" or "1.1", not "2".
            2       | Parameter 'history.version' must be "1" or "1.1", not 2.
            "1.2"   | Parameter 'history.version' must be "1" or "1.1", not "1.2".
            true    | Parameter 'history.version' must be "1" or "1.1", not true.
            """)
    void otherVersionsAreRefusedNamingTheVersion(String version, String message) {
        assertThat(readFailure("{\"type\": \"FoundationModels.Transcript\", \"version\": " + version
                        + ", \"transcript\": {\"entries\": []}}"))
                .hasMessage(message);
        assertThat(readFailure("{\"session\": \"s\", \"transcript\": {\"version\": " + version
                        + ", \"transcript\": {\"entries\": []}}}"))
                .hasMessage(message.replace("'history.version'", "'history.transcript.version'"));
    }

    @Test
    void otherTypesAreRefusedNamingTheType() {
        assertThat(readFailure("{\"type\": \"Other.Transcript\", \"transcript\": {\"entries\": []}}"))
                .hasMessage("Parameter 'history.type' must be \"FoundationModels.Transcript\".");
    }

    // ---- leniency ----

    @Test
    void unknownFieldsAreIgnoredAtEveryLevel() {
        Restored restored = read("""
                {"type": "FoundationModels.Transcript", "version": "1", "savedBy": "game", "transcript": {"extra": 1, "entries": [
                  {"id": "I", "role": "instructions", "flag": true,
                   "contents": [{"type": "text", "id": "c", "text": "Guard.", "note": 1}],
                   "tools": [{"type": "function", "function": {"name": "g", "parameters": {"type": "object"}}, "x": 1}]},
                  {"id": "P", "role": "user", "contents": [{"type": "text", "id": "Pc", "text": "Hi", "lang": "en"}],
                   "options": {"temperature": 0.5, "maximumResponseTokens": 9}, "metadata": {}},
                  {"id": "R", "role": "response", "assets": [{"kind": "image"}], "segments": [],
                   "contents": [{"type": "text", "id": "Rc", "text": "Halt."}]}]}}""");

        assertThat(restored.instructions()).isEqualTo("Guard.");
        assertThat(restored.tools()).hasSize(1);
        assertThat(restored.entries())
                .containsExactly(
                        new TranscriptEntry.Prompt("P", "Pc", "Hi", null, null),
                        new TranscriptEntry.Response("R", "Rc", "Halt.", null, null));
    }

    @Test
    void missingIdsAreGenerated() {
        Restored restored = read("""
                {"entries": [
                  {"role": "instructions", "contents": [{"type": "text", "text": "Guard."}]},
                  {"role": "user", "contents": [{"text": "Hi"}]},
                  {"role": "response", "toolCalls": [{"name": "g", "arguments": "{\\"a\\": 1}"}]},
                  {"role": "tool", "toolName": "g", "toolCallID": "call_x", "contents": [{"type": "text", "text": "ok"}]},
                  {"role": "response", "contents": [{"type": "structure", "structure": {"content": [1, 2]}}]}]}""");

        assertThat(UUID.fromString(restored.instructionsEntryId())).isNotNull();
        List<TranscriptEntry> entries = restored.entries();
        assertThat(entries)
                .hasSize(4)
                .allSatisfy(entry -> assertThat(UUID.fromString(entry.id())).isNotNull());
        assertThat(entries.get(0)).isInstanceOfSatisfying(TranscriptEntry.Prompt.class, prompt -> {
            assertThat(prompt.text()).isEqualTo("Hi");
            assertThat(UUID.fromString(prompt.contentId())).isNotNull();
            assertThat(prompt.contentId()).isNotEqualTo(prompt.id());
        });
        assertThat(entries.get(1)).isInstanceOfSatisfying(TranscriptEntry.ToolCalls.class, calls -> {
            ToolCall call = calls.calls().get(0);
            assertThat(call.id()).matches("call_[A-Za-z0-9]+");
            assertThat(call.arguments()).isEqualTo(json("{\"a\": 1}"));
        });
        assertThat(entries.get(3)).isInstanceOfSatisfying(TranscriptEntry.Response.class, response -> {
            assertThat(response.structured()).isEqualTo(json("[1, 2]"));
            assertThat(response.text()).isEqualTo("[1,2]");
            assertThat(response.schemaName()).isEqualTo("Response");
            assertThat(UUID.fromString(response.contentId())).isNotNull();
        });
    }

    @Test
    void argumentsMayBeAnObjectMissingNullOrBlank() {
        Restored restored = read("""
                {"entries": [{"role": "response", "toolCalls": [
                   {"id": "a", "name": "g", "arguments": {"x": 1}}, {"id": "b", "name": "g"},
                   {"id": "c", "name": "g", "arguments": null}, {"id": "d", "name": "g", "arguments": "  "}]}]}""");

        assertThat(((TranscriptEntry.ToolCalls) restored.entries().get(0)).calls())
                .extracting(ToolCall::arguments)
                .containsExactly(object("{\"x\": 1}"), Json.object(), Json.object(), Json.object());
    }

    @Test
    void severalTextContentsAreJoinedByNewlines() {
        Restored restored = read("""
                {"entries": [
                  {"role": "instructions", "contents": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}]},
                  {"role": "user", "contents": [{"type": "text", "id": "first", "text": "1"}, {"type": "text", "id": "second", "text": "2"}]},
                  {"role": "user", "contents": [{"type": "text", "text": "x"}, {"type": "structure", "structure": {"content": {"k": 1}}}]}]}""");

        assertThat(restored.instructions()).isEqualTo("A\nB");
        assertThat(restored.entries().get(0)).isInstanceOfSatisfying(TranscriptEntry.Prompt.class, prompt -> {
            assertThat(prompt.text()).isEqualTo("1\n2");
            assertThat(prompt.contentId()).isEqualTo("first");
        });
        assertThat(((TranscriptEntry.Prompt) restored.entries().get(1)).text()).isEqualTo("x\n{\"k\":1}");
    }

    @Test
    void responseWithAnEmptyOrNullToolCallListIsAnAnswer() {
        Restored restored = read("""
                {"entries": [{"id": "R", "role": "response", "toolCalls": [], "contents": [{"type": "text", "id": "c", "text": "Hi"}]},
                             {"id": "S", "role": "response", "toolCalls": null, "contents": []}]}""");

        assertThat(restored.entries().get(0)).isEqualTo(new TranscriptEntry.Response("R", "c", "Hi", null, null));
        assertThat(restored.entries().get(1)).isInstanceOfSatisfying(TranscriptEntry.Response.class, response -> {
            assertThat(response.id()).isEqualTo("S");
            assertThat(response.text()).isEmpty();
            assertThat(response.structured()).isNull();
        });
    }

    @Test
    void structuredAnswerKeepsItsValueAndSourceAndAnUnnamedPromptSchemaIsResponse() {
        Restored restored = read("""
                {"entries": [
                  {"id": "P", "role": "user", "contents": [{"type": "text", "id": "c", "text": "Go"}],
                   "responseFormat": {"type": "jsonSchema", "jsonSchema": {"schema": {"type": "string"}}}},
                  {"id": "R", "role": "response", "contents": [
                     {"type": "text", "id": "t", "text": "ignored"},
                     {"type": "structure", "id": "s", "structure": {"source": "Mood", "content": "calm"}}]},
                  {"id": "N", "role": "user", "contents": [{"type": "text", "id": "c2", "text": "Go"}], "responseFormat": null}]}""");

        assertThat(restored.entries())
                .containsExactly(
                        new TranscriptEntry.Prompt("P", "c", "Go", json("{\"type\": \"string\"}"), "Response"),
                        new TranscriptEntry.Response("R", "s", "\"calm\"", json("\"calm\""), "Mood"),
                        new TranscriptEntry.Prompt("N", "c2", "Go", null, null));
    }

    // ---- refusals ----

    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '`', textBlock = """
            []                                                                     | Parameter 'history' must be a transcript object (the 'transcript' value of session/transcript, or its whole result).
            "text"                                                                 | Parameter 'history' must be a transcript object (the 'transcript' value of session/transcript, or its whole result).
            {}                                                                     | Parameter 'history.entries' must be an array of transcript entries.
            {"entries": {}}                                                        | Parameter 'history.entries' must be an array of transcript entries.
            {"transcript": "x"}                                                    | Parameter 'history.entries' must be an array of transcript entries.
            {"transcript": {"entries": 5}}                                         | Parameter 'history.transcript.entries' must be an array of transcript entries.
            {"entries": [5]}                                                       | Parameter 'history.entries[0]' must be an object.
            {"entries": [{}]}                                                      | Missing required parameter 'history.entries[0].role'.
            {"entries": [{"role": null}]}                                          | Missing required parameter 'history.entries[0].role'.
            {"entries": [{"role": 1}]}                                             | Parameter 'history.entries[0].role' must be a string.
            {"entries": [{"role": "system"}]}                                      | Parameter 'history.entries[0].role' must be 'instructions', 'user', 'response' or 'tool', not 'system'.
            {"entries": [{"role": "user", "id": 7, "contents": []}]}               | Parameter 'history.entries[0].id' must be a string.
            {"entries": [{"role": "user"}]}                                        | Parameter 'history.entries[0].contents' must be an array of contents.
            {"entries": [{"role": "user", "contents": {}}]}                        | Parameter 'history.entries[0].contents' must be an array of contents.
            {"entries": [{"role": "user", "contents": ["hi"]}]}                    | Parameter 'history.entries[0].contents[0]' must be an object.
            {"entries": [{"role": "user", "contents": [{"type": "text"}]}]}        | Missing required parameter 'history.entries[0].contents[0].text'.
            {"entries": [{"role": "user", "contents": [{"text": 5}]}]}             | Parameter 'history.entries[0].contents[0].text' must be a string.
            {"entries": [{"role": "user", "contents": [{"type": "image"}]}]}       | Parameter 'history.entries[0].contents[0].type' must be 'text' or 'structure' (this bridge cannot restore 'image' contents).
            {"entries": [{"role": "user", "contents": [], "responseFormat": {}}]}  | Parameter 'history.entries[0].responseFormat.jsonSchema.schema' must be a JSON Schema object.
            {"entries": [{"role": "user", "contents": [], "responseFormat": {"jsonSchema": {"schema": true}}}]} | Parameter 'history.entries[0].responseFormat.jsonSchema.schema' must be a JSON Schema object.
            {"entries": [{"role": "user", "contents": []}, {"role": "instructions"}]} | Parameter 'history.entries[1].role' 'instructions' may only be the first entry.
            {"entries": [{"role": "instructions", "contents": "x"}]}               | Parameter 'history.entries[0].contents' must be an array of contents.
            {"entries": [{"role": "instructions", "tools": {}}]}                   | Parameter 'history.entries[0].tools' must be an array of tool definitions.
            {"entries": [{"role": "response"}]}                                    | Parameter 'history.entries[0].contents' must be an array of contents.
            {"entries": [{"role": "response", "contents": [{"type": "audio"}]}]}   | Parameter 'history.entries[0].contents[0].type' must be 'text' or 'structure' (this bridge cannot restore 'audio' contents).
            {"entries": [{"role": "response", "contents": [{"type": "structure"}]}]} | Parameter 'history.entries[0].contents[0].structure.content' is missing.
            {"entries": [{"role": "response", "contents": [{"type": "structure", "structure": {"source": "X"}}]}]} | Parameter 'history.entries[0].contents[0].structure.content' is missing.
            {"entries": [{"role": "response", "toolCalls": {}}]}                   | Parameter 'history.entries[0].toolCalls' must be an array of tool calls.
            {"entries": [{"role": "response", "toolCalls": ["g"]}]}                | Parameter 'history.entries[0].toolCalls[0]' must be a tool call object.
            {"entries": [{"role": "response", "toolCalls": [{"id": "a"}]}]}        | Missing required parameter 'history.entries[0].toolCalls[0].name'.
            {"entries": [{"role": "response", "toolCalls": [{"name": "g", "id": 1}]}]} | Parameter 'history.entries[0].toolCalls[0].id' must be a string.
            {"entries": [{"role": "response", "toolCalls": [{"name": "g", "arguments": "{x"}]}]} | Parameter 'history.entries[0].toolCalls[0].arguments' is not valid JSON.
            {"entries": [{"role": "response", "toolCalls": [{"name": "g", "arguments": "{} {}"}]}]} | Parameter 'history.entries[0].toolCalls[0].arguments' is not valid JSON.
            {"entries": [{"role": "response", "toolCalls": [{"name": "g", "arguments": "[1]"}]}]} | Parameter 'history.entries[0].toolCalls[0].arguments' must be a JSON object (as a string).
            {"entries": [{"role": "response", "toolCalls": [{"name": "g", "arguments": "null"}]}]} | Parameter 'history.entries[0].toolCalls[0].arguments' must be a JSON object (as a string).
            {"entries": [{"role": "response", "toolCalls": [{"name": "g", "arguments": 5}]}]} | Parameter 'history.entries[0].toolCalls[0].arguments' must be a JSON object (as a string).
            {"entries": [{"role": "response", "toolCalls": [{"name": "g"}, {"name": "h", "arguments": []}]}]} | Parameter 'history.entries[0].toolCalls[1].arguments' must be a JSON object (as a string).
            {"entries": [{"role": "tool", "toolCallID": "c", "contents": []}]}     | Missing required parameter 'history.entries[0].toolName'.
            {"entries": [{"role": "tool", "toolName": "g", "contents": []}]}       | Missing required parameter 'history.entries[0].toolCallID'.
            {"entries": [{"role": "tool", "toolName": "g", "toolCallID": 3, "contents": []}]} | Parameter 'history.entries[0].toolCallID' must be a string.
            {"entries": [{"role": "tool", "toolName": "g", "toolCallID": "c"}]}    | Parameter 'history.entries[0].contents' must be an array of contents.
            """)
    void malformedTranscriptIsRefusedNamingTheBadFieldInSingleQuotes(String transcript, String message) {
        assertThat(readFailure(transcript)).hasMessage(message);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "{\"role\": \"user\", \"contents\": [{\"type\": \"structure\"}]}",
                "{\"role\": \"tool\", \"toolName\": \"g\", \"toolCallID\": \"c\", \"contents\": [{\"type\": \"structure\"}]}",
                "{\"role\": \"instructions\", \"contents\": [{\"type\": \"structure\", \"structure\": {}}]}"
            })
    void structureContentWithoutContentIsRefusedInEveryRole(String entry) {
        assertThat(readFailure("{\"entries\": [" + entry + "]}"))
                .hasMessage("Parameter 'history.entries[0].contents[0].structure.content' is missing.");
    }

    @Test
    void headerBesideTheEntriesIsCheckedToo() {
        assertThat(readFailure("{\"type\": \"FoundationModels.Transcript\", \"version\": \"9\", \"entries\": []}"))
                .hasMessage("Parameter 'history.version' must be \"1\" or \"1.1\", not \"9\".");
    }

    @Test
    void laterMalformedEntryRefusesTheWholeTranscript() {
        IllegalArgumentException error = readFailure("""
                {"entries": [{"role": "user", "contents": [{"text": "fine"}]},
                             {"role": "response", "contents": [{"text": "fine"}]},
                             {"role": "tool", "toolName": "g", "toolCallID": "c", "contents": [{"text": 1}]}]}""");

        assertThat(error).hasMessage("Parameter 'history.entries[2].contents[0].text' must be a string.");
    }
}
