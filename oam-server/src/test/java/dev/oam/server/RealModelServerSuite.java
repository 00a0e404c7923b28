package dev.oam.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.errors.UnauthorizedException;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.ResponseFormatJsonSchema;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionNamedToolChoice;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.chat.completions.ChatCompletionToolChoiceOption;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ModelBackends;
import dev.oam.core.model.ModelSpec;
import dev.oam.model.llama.LlamaBackend;
import dev.oam.model.llama.LlamaSettings;
import dev.oam.testing.RealModel;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * The official OpenAI clients (the Java SDK and, through src/test/python/openai_real_model_check.py, the Python
 * package) against the server on a real model file, one subclass per model ({@link GemmaServerIT} on Gemma 3 270M,
 * {@link SmolLM2ServerIT} on SmolLM2-135M-Instruct with its own template), served in-process by llama.cpp exactly as
 * {@code oam serve --model FILE} resolves it (a {@link ModelSpec.Location}; context 2048, two threads, as
 * {@code OAM_LLAMA_CONTEXT}/{@code OAM_LLAMA_THREADS} set them). The models are small and their wording is their own:
 * these assert the protocol and the validity of what they produced (tool arguments against the tool's schema,
 * json_schema content against the schema, text without U+FFFD or tool-call JSON), never the words. Greedy decoding and
 * small token limits keep them short.
 */
@Tag("real-model")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RealModelServerSuite {
    private static final String KEY = "real-model-key";
    /** What {@code OAM_LLAMA_THREADS=2 OAM_LLAMA_THREADS_BATCH=2 OAM_LLAMA_CONTEXT=2048} give {@code oam serve}. */
    private static final LlamaSettings LLAMA =
            LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 2, 2, 2048);

    private static final List<String> GATES = List.of("north", "south");
    private static final ChatCompletionFunctionTool OPEN_GATE = ChatCompletionFunctionTool.builder()
            .function(FunctionDefinition.builder()
                    .name("open_gate")
                    .description("Open one gate of the town wall.")
                    .parameters(FunctionParameters.builder()
                            .putAdditionalProperty("type", JsonValue.from("object"))
                            .putAdditionalProperty(
                                    "properties",
                                    JsonValue.from(Map.of("gate", Map.of("type", "string", "enum", GATES))))
                            .putAdditionalProperty("required", JsonValue.from(List.of("gate")))
                            .putAdditionalProperty("additionalProperties", JsonValue.from(false))
                            .build())
                    .build())
            .build();

    private final RealModel model;
    private List<ModelBackend> backends;
    private OpenAIServer server;
    private OpenAIClient client;

    RealModelServerSuite(RealModel model) {
        this.model = model;
    }

    @BeforeAll
    void serve() throws IOException {
        Path file = model.path();
        backends = List.of(new LlamaBackend(LLAMA, List.of("en")));
        LanguageModel served = ModelBackends.systemModel(
                backends,
                new ModelSpec.Location(file.toString(), null, dev.oam.core.Environment.system()),
                dev.oam.core.Environment.system());
        // A long request timeout: on a loaded machine the model only gets slower, and these check the protocol, not
        // speed.
        server = TestServers.start(
                served,
                options -> options.withSecurity(KEY, List.of())
                        .withLimits(
                                4, 64, Duration.ofMinutes(10), Duration.ofSeconds(30), 16 * 1024 * 1024, 64 * 1024));
        client = OpenAIOkHttpClient.builder()
                .baseUrl(server.uri() + "/v1")
                .apiKey(KEY)
                .maxRetries(0)
                .build();
    }

    @AfterAll
    void stop() {
        if (server != null) {
            server.close();
        }
        if (backends != null) {
            backends.forEach(ModelBackend::close);
        }
    }

    private static ChatCompletionCreateParams.Builder greedy(int maxTokens) {
        return ChatCompletionCreateParams.builder()
                .model("system")
                .temperature(0.0)
                .maxCompletionTokens(maxTokens);
    }

    /** Text a game shows as it is: never a replacement character, never the tool-call JSON of a step. */
    private void assertAnswer(String what, String text) {
        assertThat(text).as("%s on %s has no U+FFFD: %s", what, model, text).doesNotContain("\uFFFD");
        assertThat(text)
                .as("%s on %s is no tool-call JSON: %s", what, model, text)
                .doesNotContain("{\"tool_calls\"");
    }

    /** The call's arguments against open_gate's schema: an object with exactly {@code gate}, one of the enum. */
    private static void assertValidOpenGate(String arguments) throws IOException {
        JsonNode json = Json.parse(arguments);
        assertThat(json.isObject()).as(arguments).isTrue();
        List<String> keys = new ArrayList<>();
        json.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).as(arguments).containsExactly("gate");
        assertThat(json.get("gate").isTextual()).as(arguments).isTrue();
        assertThat(json.get("gate").asText()).as(arguments).isIn(GATES);
    }

    @Test
    void plainChatAnswersWithTextAndExactUsage() {
        ChatCompletion completion = client.chat()
                .completions()
                .create(greedy(16)
                        .addSystemMessage("You are Mira, the innkeeper of the Gilded Goose.")
                        .addUserMessage("Hello! Who are you?")
                        .build());
        assertThat(completion.choices()).hasSize(1);
        ChatCompletion.Choice choice = completion.choices().get(0);
        assertThat(choice.finishReason())
                .isIn(ChatCompletion.Choice.FinishReason.STOP, ChatCompletion.Choice.FinishReason.LENGTH);
        assertThat(choice.message().content())
                .hasValueSatisfying(text -> assertThat(text).isNotBlank());
        assertAnswer("the answer", choice.message().content().orElseThrow());
        assertThat(choice.message().toolCalls().orElse(List.of())).isEmpty();
        var usage = completion.usage().orElseThrow();
        assertThat(usage.promptTokens()).isPositive();
        assertThat(usage.completionTokens()).isBetween(1L, 16L);
        assertThat(usage.totalTokens()).isEqualTo(usage.promptTokens() + usage.completionTokens());
        assertThat(completion.model()).isEqualTo("system");
    }

    @Test
    void aRequiredToolCallValidatesAgainstTheSchemaThenItsOutputIsAnswered() throws IOException {
        ChatCompletionCreateParams.Builder params = greedy(16)
                .addTool(OPEN_GATE)
                .toolChoice(ChatCompletionToolChoiceOption.Auto.REQUIRED)
                .addUserMessage("Please open the north gate for the caravan.");
        ChatCompletion first = client.chat().completions().create(params.build());
        ChatCompletion.Choice choice = first.choices().get(0);
        assertThat(choice.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
        List<ChatCompletionMessageToolCall> calls = choice.message().toolCalls().orElseThrow();
        assertThat(calls).isNotEmpty();
        for (ChatCompletionMessageToolCall call : calls) {
            ChatCompletionMessageFunctionToolCall function = call.asFunction();
            assertThat(function.id()).matches("call_[A-Za-z0-9]{24}");
            assertThat(function.function().name()).isEqualTo("open_gate");
            assertValidOpenGate(function.function().arguments());
        }

        params.addMessage(choice.message());
        for (ChatCompletionMessageToolCall call : calls) {
            params.addMessage(ChatCompletionToolMessageParam.builder()
                    .toolCallId(call.asFunction().id())
                    .content("{\"opened\":true}")
                    .build());
        }
        params.toolChoice(ChatCompletionToolChoiceOption.Auto.NONE).maxCompletionTokens(24);
        ChatCompletion second = client.chat().completions().create(params.build());
        ChatCompletion.Choice answer = second.choices().get(0);
        assertThat(answer.finishReason())
                .isIn(ChatCompletion.Choice.FinishReason.STOP, ChatCompletion.Choice.FinishReason.LENGTH);
        assertThat(answer.message().content())
                .hasValueSatisfying(text -> assertThat(text).isNotBlank());
        assertAnswer(
                "the answer after the tool round", answer.message().content().orElseThrow());
        assertThat(answer.message().toolCalls().orElse(List.of())).isEmpty();
        // The second request carried the call and its output: its prompt is longer than the same request without them
        // (not than the first's, whose prompt also describes the tools, which `none` leaves out).
        ChatCompletion without = client.chat()
                .completions()
                .create(greedy(1)
                        .addTool(OPEN_GATE)
                        .toolChoice(ChatCompletionToolChoiceOption.Auto.NONE)
                        .addUserMessage("Please open the north gate for the caravan.")
                        .build());
        assertThat(second.usage().orElseThrow().promptTokens())
                .isGreaterThan(without.usage().orElseThrow().promptTokens());
    }

    @Test
    void streamingANamedToolCallArrivesAsIndexedDeltasTheAccumulatorReassembles() throws IOException {
        ChatCompletionCreateParams params = greedy(16)
                .addTool(OPEN_GATE)
                .toolChoice(ChatCompletionNamedToolChoice.builder()
                        .function(ChatCompletionNamedToolChoice.Function.builder()
                                .name("open_gate")
                                .build())
                        .build())
                .streamOptions(
                        ChatCompletionStreamOptions.builder().includeUsage(true).build())
                .addUserMessage("The south gate, quickly!")
                .build();
        ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
        List<Long> indexes = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        int chunks = 0;
        try (StreamResponse<ChatCompletionChunk> stream =
                client.chat().completions().createStreaming(params)) {
            for (Iterator<ChatCompletionChunk> it = stream.stream().iterator(); it.hasNext(); chunks++) {
                ChatCompletionChunk chunk = it.next();
                accumulator.accumulate(chunk);
                chunk.choices()
                        .forEach(c -> c.delta()
                                .toolCalls()
                                .ifPresent(list -> list.forEach(t -> {
                                    indexes.add(t.index());
                                    t.id().ifPresent(ids::add);
                                })));
            }
        }
        assertThat(chunks).isGreaterThanOrEqualTo(3); // role, the call's deltas, finish (+ usage)
        assertThat(indexes).isNotEmpty().startsWith(0L);
        assertThat(ids).allMatch(id -> id.matches("call_[A-Za-z0-9]{24}"));
        ChatCompletion whole = accumulator.chatCompletion();
        ChatCompletion.Choice choice = whole.choices().get(0);
        assertThat(choice.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
        List<ChatCompletionMessageToolCall> calls = choice.message().toolCalls().orElseThrow();
        assertThat(calls).hasSize(ids.size());
        for (ChatCompletionMessageToolCall call : calls) {
            assertThat(call.asFunction().function().name()).isEqualTo("open_gate");
            assertValidOpenGate(call.asFunction().function().arguments());
        }
        assertThat(whole.usage().orElseThrow().completionTokens()).isPositive();
    }

    @Test
    void streamingTextArrivesInPiecesWithTheUsageChunk() {
        ChatCompletionAccumulator accumulator = ChatCompletionAccumulator.create();
        List<String> pieces = new ArrayList<>();
        try (StreamResponse<ChatCompletionChunk> stream = client.chat()
                .completions()
                .createStreaming(greedy(16)
                        .streamOptions(ChatCompletionStreamOptions.builder()
                                .includeUsage(true)
                                .build())
                        .addUserMessage("Tell me about the road north.")
                        .build())) {
            stream.stream().forEach(chunk -> {
                accumulator.accumulate(chunk);
                chunk.choices()
                        .forEach(c ->
                                c.delta().content().filter(s -> !s.isEmpty()).ifPresent(pieces::add));
            });
        }
        assertThat(pieces).hasSizeGreaterThan(1);
        ChatCompletion whole = accumulator.chatCompletion();
        assertThat(whole.choices().get(0).message().content()).contains(String.join("", pieces));
        assertAnswer("the streamed answer", String.join("", pieces));
        assertThat(whole.usage().orElseThrow().completionTokens()).isBetween(1L, 16L);
    }

    @Test
    void jsonSchemaContentParsesAndValidates() throws IOException {
        ResponseFormatJsonSchema format = ResponseFormatJsonSchema.builder()
                .jsonSchema(ResponseFormatJsonSchema.JsonSchema.builder()
                        .name("GateOrder")
                        .strict(true)
                        .schema(ResponseFormatJsonSchema.JsonSchema.Schema.builder()
                                .putAdditionalProperty("type", JsonValue.from("object"))
                                .putAdditionalProperty(
                                        "properties",
                                        JsonValue.from(Map.of(
                                                "gate", Map.of("type", "string", "enum", GATES),
                                                "open", Map.of("type", "boolean"))))
                                .putAdditionalProperty("required", JsonValue.from(List.of("gate", "open")))
                                .putAdditionalProperty("additionalProperties", JsonValue.from(false))
                                .build())
                        .build())
                .build();
        ChatCompletion completion = client.chat()
                .completions()
                .create(greedy(48)
                        .responseFormat(format)
                        .addUserMessage("Open the north gate.")
                        .build());
        ChatCompletion.Choice choice = completion.choices().get(0);
        assertThat(choice.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
        String content = choice.message().content().orElseThrow();
        JsonNode json = Json.parse(content);
        List<String> keys = new ArrayList<>();
        json.fieldNames().forEachRemaining(keys::add);
        assertThat(keys).as(content).containsExactlyInAnyOrder("gate", "open");
        assertThat(json.get("gate").asText()).as(content).isIn(GATES);
        assertThat(json.get("open").isBoolean()).as(content).isTrue();
    }

    @Test
    void errorsArriveAsTheSdksTypedExceptionsWithOpenAIsCodes() {
        OpenAIClient wrongKey = OpenAIOkHttpClient.builder()
                .baseUrl(server.uri() + "/v1")
                .apiKey("wrong")
                .maxRetries(0)
                .build();
        assertThatThrownBy(() -> wrongKey.chat()
                        .completions()
                        .create(greedy(8).addUserMessage("Hi").build()))
                .isInstanceOfSatisfying(UnauthorizedException.class, e -> {
                    assertThat(e.statusCode()).isEqualTo(401);
                    assertThat(e.code()).contains("invalid_api_key");
                });
        assertThatThrownBy(() -> client.chat()
                        .completions()
                        .create(greedy(8).model("gpt-9").addUserMessage("Hi").build()))
                .isInstanceOfSatisfying(NotFoundException.class, e -> {
                    assertThat(e.statusCode()).isEqualTo(404);
                    assertThat(e.code()).contains("model_not_found");
                    assertThat(e.param()).contains("model");
                });
        // About 3000 tokens with Gemma's tokenizer and SmolLM2's: more than the 2048 of the context.
        String tooLong = "The tavern by the river serves stew and bread. ".repeat(300);
        assertThatThrownBy(() -> client.chat()
                        .completions()
                        .create(greedy(8).addUserMessage(tooLong).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> {
                    assertThat(e.statusCode()).isEqualTo(400);
                    assertThat(e.code()).contains("context_length_exceeded");
                    assertThat(e.param()).contains("messages");
                    assertThat(e.getMessage()).contains("2048");
                });
    }

    @Test
    void theOfficialPythonClientPassesEveryCheck() throws Exception {
        Path root =
                Path.of(System.getProperty("oam.root", "..")).toAbsolutePath().normalize();
        String pythonPath = run(
                        List.of("bash", root.resolve("bin/lib/openai-python.sh").toString()),
                        Map.of(),
                        "installing openai")
                .strip();
        String out = run(
                List.of(
                        "python3",
                        root.resolve("oam-server/src/test/python/openai_real_model_check.py")
                                .toString(),
                        server.uri() + "/v1",
                        KEY,
                        model.title()),
                Map.of("PYTHONPATH", pythonPath),
                "the Python client check on " + model);
        assertThat(out).contains("8 passed, 0 failed");
    }

    /** Runs a child process to the end; its output is the test's evidence. */
    private static String run(List<String> command, Map<String, String> env, String what)
            throws IOException, InterruptedException {
        Path log = Files.createTempFile("oam-python", ".log");
        try {
            ProcessBuilder builder =
                    new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
            builder.environment().putAll(env);
            Process process = builder.start();
            process.getOutputStream().close();
            String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            int code = process.waitFor();
            String err = Files.readString(log);
            System.out.println(out);
            System.err.println(err);
            assertThat(code).as(what + " failed:\n" + out + "\n" + err).isZero();
            return out;
        } finally {
            Files.deleteIfExists(log);
        }
    }
}
