package dev.oam.game.content;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.tool.ToolChannel;
import dev.oam.game.testing.RecordingModel;
import dev.oam.game.testing.Tools;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ContentTest {
    private static final String ITEM_SCHEMA = "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},"
            + "\"price\":{\"type\":\"integer\"}},\"required\":[\"name\",\"price\"]}";

    private static JsonNode json(String text) {
        try {
            return Json.parse(text);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    @Test
    void promptIsTheTextThenTheFacts() {
        assertThat(Content.prompt("A sword for a blacksmith.", "{\"town\":\"Ashford\"}"))
                .isEqualTo("A sword for a blacksmith.\nFacts: {\"town\":\"Ashford\"}");
        assertThat(Content.prompt("A sword.", null)).isEqualTo("A sword.");
    }

    @Test
    void contentComesBackInSchemaOrderFromTheDefaultInstructionsWithoutTools() throws Exception {
        RecordingModel model = RecordingModel.playing("[{\"json\":{\"price\":45,\"name\":\"Iron sword\"}}]");
        ContentRequest request = new ContentRequest(
                "An item.",
                json(ITEM_SCHEMA),
                null,
                json("{\"town\":\"Ashford\"}"),
                List.of(),
                0.7,
                AgentOptions.DEFAULT_TOOL_TIMEOUT);
        GeneratedContent content = Content.generate(request, model, ToolChannel.NONE, CancellationToken.create());
        assertThat(Json.write(content.content())).isEqualTo("{\"name\":\"Iron sword\",\"price\":45}");
        ModelRequest seen = model.requests().get(0);
        assertThat(seen.instructions()).isEqualTo(Content.DEFAULT_INSTRUCTIONS);
        assertThat(seen.prompt()).isEqualTo("An item.\nFacts: {\"town\":\"Ashford\"}");
        assertThat(seen.mode()).isEqualTo(ToolCallingMode.DISALLOWED);
        assertThat(seen.options().temperature()).isEqualTo(0.7);
    }

    @Test
    void toolsAreOfferedWithChoiceAutoAndCustomInstructionsReplaceTheDefault() throws Exception {
        RecordingModel model = RecordingModel.playing("[{\"toolCalls\":[{\"name\":\"prices\",\"arguments\":{}}]},"
                + "{\"json\":{\"name\":\"Axe\",\"price\":12}}]");
        Tools tools = Tools.answering("axes cost 12");
        ContentRequest request = new ContentRequest(
                "An item.",
                json(ITEM_SCHEMA),
                "Write loot.",
                null,
                List.of(Tools.tool("prices")),
                null,
                AgentOptions.DEFAULT_TOOL_TIMEOUT);
        GeneratedContent content = Content.generate(request, model, tools, CancellationToken.create());
        assertThat(content.toolCalls()).hasSize(1);
        assertThat(model.requests())
                .extracting(ModelRequest::mode)
                .containsExactly(ToolCallingMode.ALLOWED, ToolCallingMode.ALLOWED);
        assertThat(model.requests().get(0).instructions()).isEqualTo("Write loot.");
    }

    @Test
    void anAnswerThatBreaksTheSchemaIsGenerationFailed() {
        RecordingModel model = RecordingModel.playing("[{\"json\":{\"name\":\"Axe\"}}]");
        assertThatThrownBy(() -> Content.generate(
                        ContentRequest.of("x", json(ITEM_SCHEMA)), model, ToolChannel.NONE, CancellationToken.create()))
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.GENERATION_FAILED));
    }
}
