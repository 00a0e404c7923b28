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
import com.openai.errors.OpenAIServiceException;
import com.openai.errors.UnauthorizedException;
import com.openai.helpers.ChatCompletionAccumulator;
import com.openai.models.FunctionDefinition;
import com.openai.models.FunctionParameters;
import com.openai.models.ResponseFormatJsonSchema;
import com.openai.models.chat.completions.ChatCompletion;
import com.openai.models.chat.completions.ChatCompletionChunk;
import com.openai.models.chat.completions.ChatCompletionCreateParams;
import com.openai.models.chat.completions.ChatCompletionFunctionTool;
import com.openai.models.chat.completions.ChatCompletionMessage;
import com.openai.models.chat.completions.ChatCompletionMessageFunctionToolCall;
import com.openai.models.chat.completions.ChatCompletionMessageToolCall;
import com.openai.models.chat.completions.ChatCompletionStreamOptions;
import com.openai.models.chat.completions.ChatCompletionToolMessageParam;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The official OpenAI Java SDK against {@code oam serve} on the scripted model. */
class OpenAIJavaSdkTest {
    private static final ChatCompletionFunctionTool WEATHER = ChatCompletionFunctionTool.builder()
            .function(FunctionDefinition.builder()
                    .name("get_weather")
                    .description("Current weather in a city")
                    .parameters(FunctionParameters.builder()
                            .putAdditionalProperty("type", JsonValue.from("object"))
                            .putAdditionalProperty(
                                    "properties", JsonValue.from(Map.of("city", Map.of("type", "string"))))
                            .putAdditionalProperty("required", JsonValue.from(List.of("city")))
                            .build())
                    .build())
            .build();

    private static OpenAIClient client(OpenAIServer server, String key) {
        return OpenAIOkHttpClient.builder()
                .baseUrl(server.uri() + "/v1")
                .apiKey(key)
                .maxRetries(0)
                .build();
    }

    @Test
    void plainChatReturnsTheAnswerAndUsage() throws Exception {
        try (OpenAIServer server =
                TestServers.start(TestServers.script("[{\"text\":\"Welcome to the Gilded Goose!\"}]"))) {
            OpenAIClient client = client(server, "unused");
            ChatCompletion completion = client.chat()
                    .completions()
                    .create(ChatCompletionCreateParams.builder()
                            .model("system")
                            .addSystemMessage("You are Mira, an innkeeper.")
                            .addUserMessage("Hello!")
                            .build());
            assertThat(completion.choices()).hasSize(1);
            assertThat(completion.choices().get(0).message().content()).contains("Welcome to the Gilded Goose!");
            assertThat(completion.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
            assertThat(completion.model()).isEqualTo("system");
            assertThat(completion.usage().orElseThrow().completionTokens()).isPositive();
            assertThat(completion.usage().orElseThrow().totalTokens())
                    .isEqualTo(completion.usage().orElseThrow().promptTokens()
                            + completion.usage().orElseThrow().completionTokens());
        }
    }

    @Test
    void toolRoundTripReturnsParallelCallsThenAnswersFromTheirOutputs() throws Exception {
        String script = "[{\"toolCalls\":[{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}},"
                + "{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Rome\"}}]},"
                + "{\"template\":\"Asked '{prompt}', got: {toolOutputs}\"}]";
        try (OpenAIServer server = TestServers.start(TestServers.script(script))) {
            OpenAIClient client = client(server, "unused");
            ChatCompletionCreateParams.Builder params = ChatCompletionCreateParams.builder()
                    .model("system")
                    .addTool(WEATHER)
                    .addUserMessage("Weather in Paris and Rome?");
            ChatCompletion first = client.chat().completions().create(params.build());
            ChatCompletion.Choice choice = first.choices().get(0);
            assertThat(choice.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
            List<ChatCompletionMessageToolCall> calls =
                    choice.message().toolCalls().orElseThrow();
            assertThat(calls).hasSize(2);
            List<String> cities = new ArrayList<>();
            for (ChatCompletionMessageToolCall call : calls) {
                ChatCompletionMessageFunctionToolCall function = call.asFunction();
                assertThat(function.id()).matches("call_[A-Za-z0-9]{24}");
                assertThat(function.function().name()).isEqualTo("get_weather");
                cities.add(
                        Json.parse(function.function().arguments()).get("city").asText());
            }
            assertThat(cities).containsExactly("Paris", "Rome");

            params.addMessage(choice.message());
            // Answered in the opposite order: the server puts outputs back in call order.
            params.addMessage(ChatCompletionToolMessageParam.builder()
                    .toolCallId(calls.get(1).asFunction().id())
                    .content("rain")
                    .build());
            params.addMessage(ChatCompletionToolMessageParam.builder()
                    .toolCallId(calls.get(0).asFunction().id())
                    .content("sun")
                    .build());
            ChatCompletion second = client.chat().completions().create(params.build());
            assertThat(second.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.STOP);
            assertThat(second.choices().get(0).message().content())
                    .contains("Asked 'Weather in Paris and Rome?', got: sun\nrain");
        }
    }

    @Test
    void streamingDeliversTextDeltasAndToolCallDeltasTheAccumulatorReassembles() throws Exception {
        String script = "[{\"text\":\"One two three four five six\",\"chunks\":3},"
                + "{\"toolCalls\":[{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Oslo\"}},"
                + "{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Bergen\"}}]}]";
        try (OpenAIServer server = TestServers.start(TestServers.script(script))) {
            OpenAIClient client = client(server, "unused");
            ChatCompletionCreateParams.Builder params = ChatCompletionCreateParams.builder()
                    .model("system")
                    .addTool(WEATHER)
                    .streamOptions(ChatCompletionStreamOptions.builder()
                            .includeUsage(true)
                            .build());

            ChatCompletionAccumulator text = ChatCompletionAccumulator.create();
            List<String> deltas = new ArrayList<>();
            try (StreamResponse<ChatCompletionChunk> stream = client.chat()
                    .completions()
                    .createStreaming(params.addUserMessage("Count").build())) {
                stream.stream().forEach(chunk -> {
                    text.accumulate(chunk);
                    chunk.choices()
                            .forEach(c -> c.delta()
                                    .content()
                                    .filter(s -> !s.isEmpty())
                                    .ifPresent(deltas::add));
                });
            }
            assertThat(deltas).hasSizeGreaterThan(1);
            ChatCompletion answer = text.chatCompletion();
            assertThat(answer.choices().get(0).message().content()).contains("One two three four five six");
            assertThat(answer.usage().orElseThrow().completionTokens()).isPositive();

            ChatCompletionAccumulator tools = ChatCompletionAccumulator.create();
            List<Long> indexes = new ArrayList<>();
            try (StreamResponse<ChatCompletionChunk> stream = client.chat()
                    .completions()
                    .createStreaming(params.addUserMessage("Weather?").build())) {
                stream.stream().forEach(chunk -> {
                    tools.accumulate(chunk);
                    chunk.choices()
                            .forEach(c ->
                                    c.delta().toolCalls().ifPresent(list -> list.forEach(t -> indexes.add(t.index()))));
                });
            }
            assertThat(indexes).containsExactly(0L, 0L, 1L, 1L);
            ChatCompletion.Choice choice = tools.chatCompletion().choices().get(0);
            assertThat(choice.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
            List<ChatCompletionMessageToolCall> calls =
                    choice.message().toolCalls().orElseThrow();
            assertThat(calls)
                    .extracting(c -> c.asFunction().function().arguments())
                    .containsExactly("{\"city\":\"Oslo\"}", "{\"city\":\"Bergen\"}");
            assertThat(calls).extracting(c -> c.asFunction().id()).allMatch(id -> id.matches("call_[A-Za-z0-9]{24}"));
        }
    }

    /**
     * What the SDK's typed structured output sends ({@code strict} json_schema from a class) comes back as that class.
     */
    public static final class Order {
        public String dish;
        public int quantity;
    }

    @Test
    void jsonSchemaOutputIsValidatedAndParsedByTheSdk() throws Exception {
        // The script answers with the keys out of schema order: the server puts them in schema order.
        String script = "[{\"json\":{\"quantity\":2,\"dish\":\"stew\"}},{\"json\":{\"dish\":\"pie\"}}]";
        try (OpenAIServer server = TestServers.start(TestServers.script(script))) {
            OpenAIClient client = client(server, "unused");
            var typed = client.chat()
                    .completions()
                    .create(ChatCompletionCreateParams.builder()
                            .model("system")
                            .addUserMessage("Two stews, please")
                            .responseFormat(Order.class)
                            .build());
            Order order = typed.choices().get(0).message().content().orElseThrow();
            assertThat(order.dish).isEqualTo("stew");
            assertThat(order.quantity).isEqualTo(2);
            assertThat(typed.rawChatCompletion().choices().get(0).message().content())
                    .contains("{\"dish\":\"stew\",\"quantity\":2}");

            // An answer that breaks the schema (the scripted model is never asked twice) is a 500, not a bad object.
            ResponseFormatJsonSchema format = ResponseFormatJsonSchema.builder()
                    .jsonSchema(ResponseFormatJsonSchema.JsonSchema.builder()
                            .name("Order")
                            .strict(true)
                            .schema(ResponseFormatJsonSchema.JsonSchema.Schema.builder()
                                    .putAdditionalProperty("type", JsonValue.from("object"))
                                    .putAdditionalProperty(
                                            "properties",
                                            JsonValue.from(Map.of(
                                                    "dish",
                                                    Map.of("type", "string"),
                                                    "quantity",
                                                    Map.of("type", "integer"))))
                                    .putAdditionalProperty("required", JsonValue.from(List.of("dish", "quantity")))
                                    .build())
                            .build())
                    .build();
            assertThatThrownBy(() -> client.chat()
                            .completions()
                            .create(ChatCompletionCreateParams.builder()
                                    .model("system")
                                    .addUserMessage("A pie")
                                    .responseFormat(format)
                                    .build()))
                    .isInstanceOfSatisfying(OpenAIServiceException.class, e -> {
                        assertThat(e.statusCode()).isEqualTo(500);
                        assertThat(e.code()).contains("generation_failed");
                    });
        }
    }

    @Test
    void errorsArriveAsTheSdksTypedExceptions() throws Exception {
        try (OpenAIServer server = TestServers.start(
                TestServers.script("[{\"text\":\"never\"}]"), options -> options.withSecurity("sesame", List.of()))) {
            assertThatThrownBy(() -> client(server, "wrong")
                            .chat()
                            .completions()
                            .create(ChatCompletionCreateParams.builder()
                                    .model("system")
                                    .addUserMessage("Hi")
                                    .build()))
                    .isInstanceOfSatisfying(UnauthorizedException.class, e -> {
                        assertThat(e.statusCode()).isEqualTo(401);
                        assertThat(e.code()).contains("invalid_api_key");
                    });
            OpenAIClient client = client(server, "sesame");
            assertThatThrownBy(() -> client.chat()
                            .completions()
                            .create(ChatCompletionCreateParams.builder()
                                    .model("gpt-9")
                                    .addUserMessage("Hi")
                                    .build()))
                    .isInstanceOfSatisfying(NotFoundException.class, e -> {
                        assertThat(e.code()).contains("model_not_found");
                        assertThat(e.param()).contains("model");
                    });
            String huge = "tavern ".repeat(40_000);
            assertThatThrownBy(() -> client.chat()
                            .completions()
                            .create(ChatCompletionCreateParams.builder()
                                    .model("system")
                                    .addUserMessage(huge)
                                    .build()))
                    .isInstanceOfSatisfying(BadRequestException.class, e -> {
                        assertThat(e.code()).contains("context_length_exceeded");
                        assertThat(e.getMessage()).contains("maximum context length is 8192 tokens");
                    });
            // None of these reached the model: its only step is still there to be played.
            JsonNode models = Json.parse(client.models()
                    .list()
                    .items()
                    .get(0)
                    ._id()
                    .asString()
                    .map(id -> "\"" + id + "\"")
                    .orElse("null"));
            assertThat(models.asText()).isEqualTo("system");
            assertThat(client.chat()
                            .completions()
                            .create(ChatCompletionCreateParams.builder()
                                    .model("system")
                                    .addUserMessage("Hi")
                                    .build())
                            .choices()
                            .get(0)
                            .message()
                            .content())
                    .contains("never");
        }
    }

    @Test
    void theAssistantMessageTheSdkEchoesBackIsAcceptedAsHistory() throws Exception {
        try (OpenAIServer server = TestServers.start(
                TestServers.script("[{\"text\":\"First.\"},{\"template\":\"You said: {prompt}\"}]"))) {
            OpenAIClient client = client(server, "unused");
            ChatCompletionCreateParams.Builder params =
                    ChatCompletionCreateParams.builder().model("system").addUserMessage("One");
            ChatCompletionMessage reply = client.chat()
                    .completions()
                    .create(params.build())
                    .choices()
                    .get(0)
                    .message();
            params.addMessage(reply).addUserMessage("Two");
            assertThat(client.chat()
                            .completions()
                            .create(params.build())
                            .choices()
                            .get(0)
                            .message()
                            .content())
                    .contains("You said: Two");
        }
    }
}
