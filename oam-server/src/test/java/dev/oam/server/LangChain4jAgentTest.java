package dev.oam.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.langchain4j.agent.tool.ToolSpecification;
import dev.langchain4j.model.chat.request.json.JsonObjectSchema;
import dev.langchain4j.model.openai.OpenAiChatModel;
import dev.langchain4j.service.AiServices;
import dev.langchain4j.service.SystemMessage;
import dev.langchain4j.service.tool.ToolExecutor;
import dev.oam.core.json.Json;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * A third client no one here wrote: a LangChain4j agent ({@code AiServices} on {@code OpenAiChatModel}) with one tool,
 * against the server on the scripted model. LangChain4j runs the loop itself: the model's call comes back as
 * {@code tool_calls}, the agent runs its tool and sends the history with the {@code tool} message, the model answers.
 */
class LangChain4jAgentTest {
    interface Innkeeper {
        @SystemMessage("You are Mira, the innkeeper. Use open_gate when a guest asks for a gate.")
        String chat(String message);
    }

    @Test
    void anAgentWithOneToolRunsTheToolLoopThroughTheServer() throws Exception {
        String script = "[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"north\"}}]},"
                + "{\"template\":\"The {toolOutput} gate stands open.\"}]";
        RecordingModel model = new RecordingModel(TestServers.script(script), false);
        try (OpenAIServer server = TestServers.start(model, options -> options.withSecurity("lc4j-key", List.of()))) {
            OpenAiChatModel chatModel = OpenAiChatModel.builder()
                    .baseUrl(server.uri() + "/v1")
                    .apiKey("lc4j-key")
                    .modelName("system")
                    .maxRetries(0)
                    .build();
            ToolSpecification openGate = ToolSpecification.builder()
                    .name("open_gate")
                    .description("Open one gate of the town wall.")
                    .parameters(JsonObjectSchema.builder()
                            .addEnumProperty("gate", List.of("north", "south"))
                            .required("gate")
                            .build())
                    .build();
            List<String> arguments = new CopyOnWriteArrayList<>();
            ToolExecutor opener = (request, memoryId) -> {
                arguments.add(request.arguments());
                try {
                    return Json.parse(request.arguments()).get("gate").asText();
                } catch (java.io.IOException e) {
                    throw new IllegalArgumentException(e);
                }
            };
            Innkeeper mira = AiServices.builder(Innkeeper.class)
                    .chatModel(chatModel)
                    .tools(Map.of(openGate, opener))
                    .build();

            String answer = mira.chat("Open the north gate, please.");

            assertThat(answer).isEqualTo("The north gate stands open.");
            assertThat(arguments).hasSize(1);
            assertThat(Json.parse(arguments.get(0)).get("gate").asText()).isEqualTo("north");
            // Two model steps: the call, then the answer from the tool output the agent sent back.
            assertThat(model.requests).hasSize(2);
            assertThat(model.requests.get(0).tools()).extracting(t -> t.name()).containsExactly("open_gate");
            assertThat(model.requests.get(0).instructions()).contains("You are Mira, the innkeeper.");
        }
    }
}
