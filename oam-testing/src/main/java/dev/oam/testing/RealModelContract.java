package dev.oam.testing;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real-model suite: one bridge with a real model file ({@link RealModel}: Gemma 3 270M, the base model without a
 * template, or SmolLM2-135M-Instruct with its own) as its system model, driven over a transport the subclass chooses,
 * one session per case; one concrete subclass per transport and model. It checks validity and protocol, never wording:
 * what the grammar and the bridge guarantee on any model (arguments that fit the tool's schema, answers that fit the
 * turn's schema, a decision among the offered ids, streamed NPC events that add up to the line, a cancel that stops a
 * generation, the prompt cache, text a game can show: no U+FFFD, no tool-call JSON in an answer), not what these small
 * models happen to say.
 *
 * <p>Budgets are small and prompts short: the model runs on the CPU, in a build that shares it.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class RealModelContract {
    /** A guard against a hung bridge, not a speed check: a turn on a loaded 2-core machine takes a minute. */
    protected static final Duration WAIT = Duration.ofMinutes(10);

    private static final Set<String> EMOTIONS = Set.of(
            "neutral",
            "happy",
            "sad",
            "angry",
            "afraid",
            "surprised",
            "suspicious",
            "amused",
            "disgusted",
            "excited",
            "curious",
            "confused",
            "worried",
            "grateful",
            "annoyed",
            "proud");

    /** The property names of the NPC reply's JSON (Replies.structured): the schema's words, not a player's line. */
    private static final Set<String> REPLY_SCHEMA_WORDS =
            Set.of("emotion", "line", "player_options", "playeroptions", "ends_conversation", "endsconversation");

    private static final String GATE_TOOL = """
            {"name": "open_gate", "description": "Open one of the town's gates.",
             "parameters": {"type": "object", "properties": {
               "gate": {"type": "string", "enum": ["north", "south"]},
               "delay_seconds": {"type": "integer", "minimum": 0, "maximum": 60}},
              "required": ["gate", "delay_seconds"], "additionalProperties": false}}""";

    /** The model file this run drives. */
    protected final RealModel model;

    private ProtocolClient client;
    private Conversation c;
    private int ids = 100;

    protected RealModelContract(RealModel model) {
        this.model = model;
    }

    @TempDir
    static Path files;

    /**
     * Starts a bridge whose system model is the GGUF file {@code model} (stdio: {@code --model}; the C ABI:
     * {@code OAM_MODEL}), with one generation thread and a context of 2048 tokens.
     */
    protected abstract ProtocolClient connect(Path model) throws Exception;

    /** What the transport printed on stderr (for failure messages; empty where it has none). */
    protected String stderr() {
        return "";
    }

    @BeforeAll
    void start() throws Exception {
        client = connect(model.path());
        c = new Conversation(client, WAIT);
        c.call(1, "initialize", "{\"protocolVersion\":\"1.0\"}");
    }

    @AfterAll
    void stop() throws Exception {
        if (client == null) {
            return;
        }
        try {
            client.endInput();
            assertThat(client.awaitStopped(Duration.ofMinutes(2)))
                    .as("the bridge stops at the end of input")
                    .isTrue();
            assertThat(client.garbage())
                    .as("the transport carries JSON-RPC only; stderr:\n%s", stderr())
                    .isEmpty();
        } finally {
            c.close();
        }
    }

    private int id() {
        return ids++;
    }

    /** Sends a request whose params may be written over several lines: the wire takes one line per message. */
    private void request(int id, String method, String paramsJson) throws Exception {
        c.request(id, method, paramsJson == null ? null : Json.write(Json.parse(paramsJson)));
    }

    private JsonNode call(String method, String paramsJson) throws Exception {
        int id = id();
        request(id, method, paramsJson);
        return c.result(id);
    }

    private JsonNode create(String session, String extra) throws Exception {
        return call("session/create", "{\"session\":\"" + session + "\"" + (extra.isEmpty() ? "" : "," + extra) + "}");
    }

    // ---------------------------------------------------------------- load and template

    @Test
    void theModelLoadsAndSessionsAreWarnedOnlyWhenItsTurnFormatIsNotTheFilesOwn() throws Exception {
        JsonNode created = create("load", "\"options\":{\"maxResponseTokens\":4,\"temperature\":0}");
        assertTemplateWarning(created, "session/create");
        JsonNode result = call("session/respond", "{\"session\":\"load\",\"prompt\":\"Hello.\"}");
        assertThat(result.path("text").isTextual()).isTrue();
        assertShowable("the answer", result.path("text").asText());
        assertThat(result.path("usage").path("inputTokens").asInt()).isPositive();
        // An instruction-tuned model may end its turn at once (1 token: the end of turn, which counts); never more than
        // 4.
        assertThat(result.path("usage").path("outputTokens").asInt()).isBetween(1, 4);
        JsonNode availability = call("model/availability", null);
        assertThat(availability.path("available").asBoolean())
                .as("%s", availability)
                .isTrue();
        assertThat(availability.path("variant").asText()).isEqualTo(model.variant());
        assertThat(availability.path("contextSize").asInt()).isEqualTo(2048);
    }

    // ---------------------------------------------------------------- tools, schemas, decisions

    @Test
    void aForcedToolCallHasArgumentsThatFitTheToolsSchema() throws Exception {
        create(
                "tool",
                "\"tools\":[" + GATE_TOOL + "],\"options\":{\"toolChoice\":\"required\",\"maxToolRounds\":1,"
                        + "\"maxResponseTokens\":12,\"temperature\":0}");
        int request = id();
        request(request, "session/respond", "{\"session\":\"tool\",\"prompt\":\"Open the north gate in 5 seconds.\"}");
        // The grammar allows 1-4 calls in one step: answer each as it comes, until the turn's response.
        List<JsonNode> arguments = new ArrayList<>();
        int[] taken = {0};
        while (true) {
            int before = taken[0];
            int[] seen = {0};
            JsonNode next = c.await(
                    m -> (Conversation.isResponse(m) && m.path("id").asInt(-1) == request)
                            || ("tool/call".equals(m.path("method").asText()) && seen[0]++ == before),
                    "a tool/call or the response");
            if (Conversation.isResponse(next)) {
                break;
            }
            taken[0]++;
            assertThat(next.path("params").path("session").asText()).isEqualTo("tool");
            assertThat(next.path("params").path("call").path("name").asText()).isEqualTo("open_gate");
            JsonNode args = next.path("params").path("call").path("arguments");
            assertThat(fieldNames(args)).as("%s", args).containsExactlyInAnyOrder("gate", "delay_seconds");
            assertThat(args.path("gate").asText()).isIn("north", "south");
            assertThat(args.path("delay_seconds").isIntegralNumber())
                    .as("%s", args)
                    .isTrue();
            assertThat(args.path("delay_seconds").asInt()).isBetween(0, 60);
            arguments.add(args);
            c.reply(next, "{\"output\":{\"opened\":true}}");
        }
        JsonNode result = c.result(request);
        assertThat(arguments).as("the forced step called the tool").isNotEmpty();
        assertThat(result.path("toolCalls")).hasSize(arguments.size());
        for (int i = 0; i < arguments.size(); i++) {
            assertThat(result.path("toolCalls").get(i).path("isError").asBoolean(true))
                    .isFalse();
            assertThat(result.path("toolCalls")
                            .get(i)
                            .path("output")
                            .path("opened")
                            .asBoolean())
                    .isTrue();
        }
        assertThat(result.path("toolCalls").findValues("arguments")).containsExactlyInAnyOrderElementsOf(arguments);
        assertThat(result.path("steps").get(0).path("toolCallingMode").asText()).isEqualTo("required");
        assertThat(result.path("text").isTextual()).isTrue();
        assertAnswer("the answer after the tool round", result.path("text").asText());
    }

    @Test
    void aSchemaTurnAnswersWithJsonThatFitsTheSchema() throws Exception {
        create("schema", "\"options\":{\"maxResponseTokens\":48,\"temperature\":0}");
        String schema = """
                {"type": "object", "properties": {
                  "mood": {"type": "string", "enum": ["calm", "angry"]},
                  "guards": {"type": "integer", "minimum": 0, "maximum": 9},
                  "note": {"type": "string", "maxLength": 30}},
                 "required": ["mood", "guards", "note"], "additionalProperties": false}""";
        JsonNode result = call(
                "session/respond",
                "{\"session\":\"schema\",\"prompt\":\"Report on the gate.\",\"schema\":" + schema + "}");
        JsonNode structured = result.path("structured");
        assertThat(fieldNames(structured)).as("%s", structured).containsExactly("mood", "guards", "note");
        assertThat(structured.path("mood").asText()).isIn("calm", "angry");
        assertThat(structured.path("guards").isIntegralNumber()).isTrue();
        assertThat(structured.path("guards").asInt()).isBetween(0, 9);
        assertThat(structured.path("note").isTextual()).isTrue();
        assertShowable("the note", structured.path("note").asText());
        // maxLength is described to the model, not enforced (docs/PROTOCOL.md); the embedded grammar caps every string
        // at
        // 256 characters and closes the value within the turn's 48 tokens.
        assertThat(structured
                        .path("note")
                        .asText()
                        .codePointCount(0, structured.path("note").asText().length()))
                .isLessThanOrEqualTo(256);
        assertThat(Json.parse(result.path("text").asText())).isEqualTo(structured);
    }

    @Test
    void aDecisionChoosesOneOfTheOfferedOptions() throws Exception {
        JsonNode result = call("decision/decide", """
                {"situation": "A wolf blocks the road.", "temperature": 0,
                 "options": [{"id": "flee", "description": "Run back"}, {"id": "fight", "description": "Draw the sword"}]}""");
        assertThat(result.path("optionID").asText()).isIn("flee", "fight");
        assertThat(result.path("reasoning").isTextual()).isTrue();
        assertShowable("the reasoning", result.path("reasoning").asText());
        assertThat(result.path("confidence").isNumber()).as("%s", result).isTrue();
        assertThat(result.path("confidence").asDouble()).isBetween(0.0, 100.0);
        assertThat(result.path("isFallback").asBoolean(true)).isFalse();
        assertThat(result.path("usage").path("outputTokens").asInt()).isPositive();
    }

    // ---------------------------------------------------------------- NPCs

    @Test
    void anNpcTalkStreamsEventsThatReplayExactlyToTheLine() throws Exception {
        JsonNode created = call("npc/create", """
                {"npc": "gorm", "persona": {"name": "Gorm", "role": "the village blacksmith", "maxSentences": 1},
                 "options": {"toolChoice": "none", "playerOptionCount": 1, "maximumResponseTokens": 64, "temperature": 0}}""");
        assertTemplateWarning(created, "npc/create");
        int request = id();
        request(request, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Got any swords?\",\"stream\":true}");
        JsonNode turn = c.result(request);
        List<JsonNode> events = npcEvents(request);
        assertThat(turn.path("line").isTextual()).isTrue();
        assertThat(replay(events))
                .as("the typewriter shows exactly the line; events %s", events)
                .isEqualTo(turn.path("line").asText());
        assertThat(events)
                .as("the line streams")
                .anyMatch(e -> e.path("type").asText().equals("lineDelta"));
        assertThat(turn.path("emotion").asText()).isIn(EMOTIONS);
        for (JsonNode e : events) {
            if (e.path("type").asText().equals("emotion")) {
                assertThat(e.path("emotion").asText()).isIn(EMOTIONS);
            }
        }
        assertAnswer("the line", turn.path("line").asText());
        assertThat(turn.path("playerOptions").isArray()).isTrue();
        for (JsonNode option : turn.path("playerOptions")) {
            assertThat(option.isTextual()).as("%s", turn).isTrue();
            assertAnswer("a player option", option.asText());
            // A word of the reply's own schema is no answer a player could give.
            assertThat(option.asText().strip().toLowerCase(Locale.ROOT))
                    .as("a player option on %s: %s", model, turn)
                    .isNotIn(REPLY_SCHEMA_WORDS);
        }
        assertThat(turn.path("endsConversation").isBoolean()).isTrue();
        assertThat(turn.path("usage").path("outputTokens").asInt()).isPositive();
    }

    /**
     * NPCs on one model are independent (issue 37): in one bridge, after an NPC with knowledge has talked, a second NPC
     * created afterwards answers, and so does the first after the second, in both orders. Each reply is readable (the
     * embedded engine holds the model to the NPC's own reply form, so it is never a fallback for an unreadable reply)
     * and has a line; what the lines say is the model's business.
     */
    @Test
    void npcsOnOneModelAnswerWhateverNpcTalkedBefore() throws Exception {
        String hilde = """
                {"name": "Hilde", "role": "the ferry keeper",
                 "knowledge": ["the bridge to Eastmarch collapsed in last night's storm"]}""";
        String sela = """
                {"name": "Sela", "role": "a travelling bard", "personality": "Witty and curious.", "maxSentences": 2}""";
        String options = "{\"maximumResponseTokens\": 64, \"compactAfterTurns\": 0, \"temperature\": 0}";
        for (String npc : List.of("hilde-1", "sela-1", "sela-2", "hilde-2")) {
            boolean isHilde = npc.startsWith("hilde");
            call(
                    "npc/create",
                    "{\"npc\": \"" + npc + "\", \"persona\": " + (isHilde ? hilde : sela) + ", \"options\": " + options
                            + "}");
            JsonNode turn = call(
                    "npc/talk",
                    "{\"npc\": \"" + npc + "\", \"line\": \""
                            + (isHilde ? "Can I take the bridge to Eastmarch?" : "Hello there, bard!") + "\"}");
            assertThat(turn.path("warnings").toString())
                    .as("%s on %s: %s", npc, model, turn)
                    .doesNotContain("could not be read");
            assertThat(turn.path("line").asText())
                    .as("%s on %s: %s", npc, model, turn)
                    .isNotBlank();
            assertAnswer("the line of " + npc, turn.path("line").asText());
            assertThat(turn.path("emotion").asText()).isIn(EMOTIONS);
        }
    }

    private List<JsonNode> npcEvents(int request) {
        List<JsonNode> out = new ArrayList<>();
        for (JsonNode m : c.messages()) {
            if (Conversation.isEvent(m, "npc/event")
                    && m.path("params").path("requestId").asInt(-1) == request) {
                out.add(m.path("params").path("event"));
            }
        }
        return out;
    }

    private static String replay(List<JsonNode> events) {
        StringBuilder shown = new StringBuilder();
        for (JsonNode event : events) {
            switch (event.path("type").asText()) {
                case "lineDelta" -> shown.append(event.path("delta").asText());
                case "lineReset" -> {
                    shown.setLength(0);
                    shown.append(event.path("line").asText());
                }
                default -> {}
            }
        }
        return shown.toString();
    }

    // ---------------------------------------------------------------- cancel and cache

    @Test
    void cancelStopsAGenerationMidwayAndTheSessionGoesOn() throws Exception {
        // A long story of up to 400 tokens keeps either model generating long after the cancel (the base model never
        // ends its turn by itself; the instruct one tells a story longer than the cancel takes to arrive).
        create("cancel", "\"options\":{\"maxResponseTokens\":400,\"temperature\":0}");
        int request = id();
        request(
                request,
                "session/respond",
                "{\"session\":\"cancel\",\"prompt\":\"Tell me a long story.\",\"stream\":true}");
        c.await(
                m -> Conversation.isEvent(m, "session/event")
                        && m.path("params").path("requestId").asInt(-1) == request
                        && m.path("params").path("event").path("type").asText().equals("text"),
                "the first streamed text");
        JsonNode cancelled = call("session/cancel", "{\"session\":\"cancel\"}");
        assertThat(cancelled.path("cancelled").asInt())
                .as("the turn was still running")
                .isEqualTo(1);
        JsonNode error = c.error(request);
        assertThat(error.path("code").asInt()).isEqualTo(-32009);
        JsonNode listed = session("cancel");
        assertThat(listed.path("entries").asInt())
                .as("a cancelled turn leaves no trace")
                .isZero();
        // The slot is free again: a schema turn, which its grammar ends after a few tokens, runs on the same session.
        JsonNode after = call(
                "session/respond",
                "{\"session\":\"cancel\",\"prompt\":\"Done?\",\"schema\":"
                        + "{\"type\":\"object\",\"properties\":{\"done\":{\"type\":\"boolean\"}},\"required\":[\"done\"]}}");
        assertThat(after.path("structured").path("done").isBoolean())
                .as("%s", after)
                .isTrue();
        assertThat(session("cancel").path("entries").asInt()).isEqualTo(2);
    }

    @Test
    void theSecondTurnReusesThePromptCache() throws Exception {
        create(
                "cache",
                "\"instructions\":\"You are Bram, the gate guard of "
                        + "Elm.\",\"options\":{\"maxResponseTokens\":6,\"temperature\":0}");
        JsonNode first = call("session/respond", "{\"session\":\"cache\",\"prompt\":\"Who are you?\"}");
        JsonNode second = call("session/respond", "{\"session\":\"cache\",\"prompt\":\"Where am I?\"}");
        int firstInput = first.path("usage").path("inputTokens").asInt();
        JsonNode usage = second.path("usage");
        assertThat(usage.path("inputTokens").asInt()).isGreaterThan(firstInput);
        assertThat(usage.path("cachedInputTokens").asInt())
                .as("%s after %s", usage, first.path("usage"))
                .isPositive()
                .isLessThan(usage.path("inputTokens").asInt())
                // the whole first prompt is a prefix of the second (its last token may be split anew)
                .isGreaterThanOrEqualTo(firstInput - 1);
    }

    // ---------------------------------------------------------------- bad files

    @Test
    void badModelFilesAreRefusedNamingTheCauseAndOtherSessionsGoOn() throws Exception {
        create("bystander", "\"options\":{\"maxResponseTokens\":3,\"temperature\":0}");
        Path missing = files.resolve("missing.gguf");
        Path truncated = truncatedCopy(model.path(), files.resolve("truncated.gguf"), 64L << 20);
        Path wrong = files.resolve("notes.gguf");
        Files.writeString(wrong, "These are my notes, not a model.\n");
        Path tail = tailCopy(model.path(), files.resolve("chunk.gguf"), 8L << 20);
        Path noFormat = unknownTurnMarkers(files.resolve("no-template.gguf"));
        String[][] cases = {
            {missing.toString(), "does not exist"},
            {truncated.toString(), "truncated"},
            {wrong.toString(), "not a GGUF file"},
            {tail.toString(), "not a GGUF file"},
            {noFormat.toString(), "no chat template"},
        };
        for (String[] bad : cases) {
            int request = id();
            request(
                    request,
                    "session/create",
                    "{\"model\":{\"type\":\"llama\",\"path\":"
                            + Json.write(Json.mapper().valueToTree(bad[0])) + "}}");
            JsonNode error = c.error(request);
            assertThat(error.path("code").asInt()).as("%s", error).isEqualTo(-32602);
            assertThat(error.path("message").asText())
                    .as("%s", error)
                    .contains("'model.path'")
                    .contains(bad[0])
                    .contains(bad[1]);
        }
        assertThat(call("ping", null).isObject()).isTrue();
        assertThat(session("bystander")).as("the other session is still there").isNotNull();
        JsonNode answer = call("session/respond", "{\"session\":\"bystander\",\"prompt\":\"Hi.\"}");
        assertThat(answer.path("usage").path("outputTokens").asInt()).isBetween(1, 3);
    }

    /**
     * A file without a template gets a warning naming the turn format the bridge writes instead; a file with its own
     * template gets none.
     */
    private void assertTemplateWarning(JsonNode created, String method) {
        if (model.hasTemplate()) {
            assertThat(created.path("warnings"))
                    .as("%s on %s, which has its own template", method, model)
                    .noneSatisfy(w -> assertThat(w.asText()).contains("no chat template"));
        } else {
            assertThat(created.path("warnings"))
                    .as("%s warns about the missing template", method)
                    .anySatisfy(w -> assertThat(w.asText())
                            .contains("no chat template")
                            .contains(model.turnFormatWarningNames()));
        }
    }

    /** Text a game shows as it is: never a replacement character (a character cut between tokens). */
    private void assertShowable(String what, String text) {
        assertThat(text).as("%s on %s has no U+FFFD: %s", what, model, text).doesNotContain("\uFFFD");
    }

    /** An answer a game shows: showable, and never the tool-call JSON of the step format leaking into the text. */
    private void assertAnswer(String what, String text) {
        assertShowable(what, text);
        assertThat(text)
                .as("%s on %s is no tool-call JSON: %s", what, model, text)
                .doesNotContain("{\"tool_calls\"");
    }

    private JsonNode session(String id) throws Exception {
        for (JsonNode s : call("session/list", null).path("sessions")) {
            if (s.path("session").asText().equals(id)) {
                return s;
            }
        }
        return null;
    }

    /** The first {@code bytes} of {@code model}: a download cut short (header intact, tensor data missing). */
    protected static Path truncatedCopy(Path model, Path to, long bytes) throws IOException {
        try (InputStream in = Files.newInputStream(model);
                OutputStream out = Files.newOutputStream(to)) {
            byte[] buffer = new byte[1 << 20];
            long left = bytes;
            int n;
            while (left > 0 && (n = in.read(buffer, 0, (int) Math.min(buffer.length, left))) > 0) {
                out.write(buffer, 0, n);
                left -= n;
            }
        }
        return to;
    }

    /** {@code bytes} from the middle of {@code model}: one chunk of a split download, no header. */
    protected static Path tailCopy(Path model, Path to, long bytes) throws IOException {
        try (InputStream in = Files.newInputStream(model);
                OutputStream out = Files.newOutputStream(to)) {
            in.skipNBytes(Files.size(model) / 2);
            out.write(in.readNBytes((int) bytes));
        }
        return to;
    }

    /**
     * A loadable model without a chat template whose vocabulary has none of the turn markers the bridge knows: the tiny
     * model's ChatML markers renamed in place (same lengths, so every offset stays right).
     */
    protected static Path unknownTurnMarkers(Path to) throws IOException {
        byte[] bytes =
                TinyGguf.tiny().name("no-turn-markers").chatTemplate(null).bytes();
        int renamed = replace(bytes, "<|im_start|>", "<|zz_start|>") + replace(bytes, "<|im_end|>", "<|zz_end|>");
        assertThat(renamed).as("the tiny vocabulary's ChatML markers").isEqualTo(2);
        Files.write(to, bytes);
        return to;
    }

    private static int replace(byte[] bytes, String from, String to) {
        byte[] a = from.getBytes(StandardCharsets.UTF_8);
        byte[] b = to.getBytes(StandardCharsets.UTF_8);
        int count = 0;
        outer:
        for (int i = 0; i + a.length <= bytes.length; i++) {
            for (int j = 0; j < a.length; j++) {
                if (bytes[i + j] != a[j]) {
                    continue outer;
                }
            }
            System.arraycopy(b, 0, bytes, i, b.length);
            count++;
        }
        return count;
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            names.add(it.next());
        }
        return names;
    }
}
