package dev.oam.core.tool;

import static dev.oam.core.testing.Fixtures.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Json;
import org.junit.jupiter.api.Test;

/** What the model sees of a tool's answer (docs/PROTOCOL.md, "Tool calls"). */
class ToolReplyTest {
    @Test
    void textOutputIsSeenAsTheText() {
        assertThat(ToolReply.output(TextNode.valueOf("The gate opened.")).modelText())
                .isEqualTo("The gate opened.");
    }

    @Test
    void jsonOutputIsSeenAsCompactJson() {
        ToolReply reply = ToolReply.output(json("{ \"opened\" : true, \"gates\" : [ \"north\", \"south\" ] }"));

        assertThat(reply.modelText()).isEqualTo("{\"opened\":true,\"gates\":[\"north\",\"south\"]}");
        assertThat(reply.isError()).isFalse();
    }

    @Test
    void errorIsSeenWithAnErrorPrefixWhileTheOutputKeepsTheRawMessage() {
        ToolReply reply = ToolReply.error("Chain jammed.");

        assertThat(reply.modelText()).isEqualTo("Error: Chain jammed.");
        assertThat(reply.output()).isEqualTo(TextNode.valueOf("Chain jammed."));
        assertThat(reply.isError()).isTrue();
    }

    @Test
    void jsonErrorIsSeenAsErrorAndCompactJson() {
        assertThat(new ToolReply(json("{\"reason\": \"jammed\"}"), true).modelText())
                .isEqualTo("Error: {\"reason\":\"jammed\"}");
    }

    @Test
    void recordKeepsTheRawOutputAndMillisecondDuration() {
        ToolCall call = new ToolCall("c1", "open_gate", Json.object());

        ToolRecord record = ToolRecord.of(call, ToolReply.error("Chain jammed."), 1_234_567_890L);

        assertThat(record.call()).isEqualTo(call);
        assertThat(record.output()).isEqualTo(TextNode.valueOf("Chain jammed."));
        assertThat(record.isError()).isTrue();
        assertThat(record.durationSeconds()).isEqualTo(1.235);
        assertThat(record.reply()).isEqualTo(ToolReply.error("Chain jammed."));
    }

    @Test
    void generatedCallIdsAreCallPlusRandomAlphanumerics() {
        String first = ToolCall.newId();
        String second = ToolCall.newId();

        assertThat(first).matches("call_[A-Za-z0-9]{24}");
        assertThat(second).matches("call_[A-Za-z0-9]{24}").isNotEqualTo(first);
    }
}
