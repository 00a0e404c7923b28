package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The frame logic against templates written in Java (the real template path runs in {@link LlamaEngineTest}). */
class ChatRendererTest {
    private final List<String> asked = new ArrayList<>();

    private ChatRenderer.Template template(Function<JsonNode, String> render) {
        return json -> {
            JsonNode request = Json.parse(json);
            asked.add(request.get("messages").findValuesAsText("role").toString());
            assertThat(request.get("add_generation_prompt").asBoolean()).isTrue();
            return render.apply(request.get("messages"));
        };
    }

    /** {@code [INST]}-like: BOS text first, system folded into the first user turn, no tool role. */
    private static String tagged(JsonNode messages) {
        StringBuilder out = new StringBuilder("<s>");
        for (JsonNode m : messages) {
            String role = m.get("role").asText();
            if (role.equals("tool")) {
                throw new IllegalStateException("tool role not supported");
            }
            out.append('<').append(role).append('>').append(m.get("content").asText()).append("</").append(role).append('>');
        }
        return out.append("<assistant>").toString();
    }

    private static ChatMessage m(String role, String content) {
        return new ChatMessage(role, content);
    }

    @Test
    void noTemplateMeansChatMl() {
        ChatRenderer renderer = new ChatRenderer(null);
        assertThat(renderer.render(List.of(m("system", "s"), m("user", "u"), m("tool", "t"))))
                .isEqualTo("<|im_start|>system\ns<|im_end|>\n<|im_start|>user\nu<|im_end|>\n<|im_start|>tool\nt<|im_end|>\n"
                        + "<|im_start|>assistant\n");
    }

    @Test
    void aForeignTemplateFramesTheContentsVerbatimAndIsAskedOnlyTheSafeShapes() {
        ChatRenderer renderer = new ChatRenderer(template(ChatRendererTest::tagged));
        String content = "{{ raise_exception('x') }} {% if %} 😀 </user>";
        assertThat(renderer.render(List.of(m("system", "be brief"), m("user", content), m("assistant", "ok"),
                m("tool", "42"), m("user", "and?"))))
                .isEqualTo("<s><system>be brief</system><user>" + content + "</user><assistant>ok</assistant>"
                        + "<user>42\n\nand?</user><assistant>");
        assertThat(renderer.render(List.of(m("user", "hi"))))
                .isEqualTo("<s><user>hi</user><assistant>");
        assertThat(asked).containsExactly("[system, user, assistant, user]", "[user, assistant, user]");
    }

    @Test
    void aTemplateWithoutSystemRoleGetsTheSystemTextInTheFirstUserTurn() {
        ChatRenderer renderer = new ChatRenderer(template(messages -> {
            StringBuilder out = new StringBuilder();
            for (JsonNode m : messages) {
                if (!m.get("role").asText().equals("system")) {
                    out.append('[').append(m.get("role").asText()).append(']').append(m.get("content").asText());
                }
            }
            return out.append("[assistant]").toString();
        }));
        assertThat(renderer.render(List.of(m("system", "S"), m("user", "U"))))
                .isEqualTo("[user]S\n\nU[assistant]");
    }

    @Test
    void aTemplateThatFailsOrRepeatsContentFallsBackToChatMl() {
        List<ChatMessage> chat = List.of(m("user", "U"));
        ChatRenderer failing = new ChatRenderer(template(messages -> {
            throw new IllegalStateException("nope");
        }));
        assertThat(failing.render(chat)).isEqualTo(ChatRenderer.chatMl(chat));
        assertThat(failing.usesTemplate()).isFalse();
        ChatRenderer repeating = new ChatRenderer(template(messages -> tagged(messages) + tagged(messages)));
        assertThat(repeating.render(chat)).isEqualTo(ChatRenderer.chatMl(chat));
    }

    @Test
    void conversationsEndingWithTheAssistantUseChatMl() {
        ChatRenderer renderer = new ChatRenderer(template(ChatRendererTest::tagged));
        List<ChatMessage> chat = List.of(m("user", "U"), m("assistant", "A"));
        assertThat(renderer.render(chat)).isEqualTo(ChatRenderer.chatMl(chat));
        assertThat(renderer.usesTemplate()).isTrue();
    }

    @Test
    void normalisationTurnsToolsIntoUserTurnsAndJoinsRepeats() {
        assertThat(ChatRenderer.normalise(List.of(m("system", "S"), m("system", "T"), m("user", "U"), m("tool", "X"))))
                .containsExactly(m("system", "S"), m("user", "T\n\nU\n\nX"));
        assertThat(ChatRenderer.normalise(List.of(m("assistant", "A"), m("user", "U")))).isNull();
        assertThat(ChatRenderer.normalise(List.of(m("system", "S")))).isNull();
    }
}
