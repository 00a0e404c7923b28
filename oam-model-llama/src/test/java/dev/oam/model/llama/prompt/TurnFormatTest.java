package dev.oam.model.llama.prompt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.model.llama.TinyEngines;
import dev.oam.model.llama.engine.ModelFile;
import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.testing.gguf.TinyGguf;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Files without a chat template: which turn format they get, how it renders, and when they are refused. */
class TurnFormatTest {
    private static final Set<String> GEMMA_VOCAB =
            Set.of("<pad>", "<eos>", "<bos>", "<start_of_turn>", "<end_of_turn>");
    private static final Set<String> LLAMA3_VOCAB =
            Set.of("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>");

    private static ChatMessage m(String role, String content) {
        return new ChatMessage(role, content);
    }

    @Test
    void theFormatIsTheOneWhoseMarkersTheVocabularyHas() {
        assertThat(TurnFormat.forVocabulary("gemma3", GEMMA_VOCAB)).isEqualTo(TurnFormat.GEMMA);
        // the vocabulary decides, not the architecture name
        assertThat(TurnFormat.forVocabulary("llama", GEMMA_VOCAB)).isEqualTo(TurnFormat.GEMMA);
        assertThat(TurnFormat.forVocabulary("llama", LLAMA3_VOCAB)).isEqualTo(TurnFormat.LLAMA3);
        assertThat(TurnFormat.forVocabulary("llama", Set.of("<s>", "</s>", "<|im_start|>", "<|im_end|>")))
                .isEqualTo(TurnFormat.CHATML);
        assertThat(TurnFormat.forVocabulary("llama", Set.of("<s>", "</s>", "<|im_start|>")))
                .as("half the markers")
                .isNull();
        assertThat(TurnFormat.forVocabulary("gemma3", Set.of("<pad>", "<eos>"))).isNull();
        // several fit: the architecture's own first, else the order of the enum
        Set<String> both = Set.of("<start_of_turn>", "<end_of_turn>", "<|im_start|>", "<|im_end|>");
        assertThat(TurnFormat.forVocabulary("qwen2", both)).isEqualTo(TurnFormat.CHATML);
        assertThat(TurnFormat.forVocabulary("phi3", both)).isEqualTo(TurnFormat.GEMMA);
    }

    @Test
    void gemmaTurnsPutTheSystemTextInTheFirstUserTurnAndToolsAsUserTurns() {
        ChatRenderer renderer = ChatRenderer.known(TurnFormat.GEMMA);
        assertThat(renderer.render(List.of(
                        m("system", "Be brief."),
                        m("user", "Hi"),
                        m("assistant", "Hello."),
                        m("tool", "42"),
                        m("user", "And?"))))
                .isEqualTo(
                        "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello.<end_of_turn>\n"
                                + "<start_of_turn>user\n42\n\nAnd?<end_of_turn>\n<start_of_turn>model\n");
        assertThat(renderer.render(List.of(m("user", "Hi"))))
                .isEqualTo("<start_of_turn>user\nHi<end_of_turn>\n<start_of_turn>model\n");
        assertThat(renderer.usesTemplate()).isTrue();
    }

    @Test
    void llama3TurnsKeepTheSystemRole() {
        ChatRenderer renderer = ChatRenderer.known(TurnFormat.LLAMA3);
        assertThat(renderer.render(List.of(m("system", "S"), m("user", "U"))))
                .isEqualTo(
                        "<|start_header_id|>system<|end_header_id|>\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nU"
                                + "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n");
        assertThat(renderer.render(List.of(m("user", "U"), m("assistant", "A"), m("user", "V"))))
                .isEqualTo(
                        "<|start_header_id|>user<|end_header_id|>\n\nU<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nA"
                                + "<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nV<|eot_id|><|start_header_id|>assistant"
                                + "<|end_header_id|>\n\n");
    }

    @Test
    void chatMlTurnsAreTheRenderersOwn() {
        List<ChatMessage> chat = List.of(m("system", "S"), m("user", "U"), m("tool", "T"));
        assertThat(ChatRenderer.known(TurnFormat.CHATML).render(chat)).isEqualTo(ChatRenderer.chatMl(chat));
    }

    @Test
    void aFileWithoutTemplateAndWithoutKnownMarkersIsRefusedNamingTheCause() throws Exception {
        Path dir = TinyEngines.MODELS.resolve("turn-format");
        Files.createDirectories(dir);
        byte[] bytes = TinyGguf.tiny().name("no-markers").chatTemplate(null).bytes();
        rename(bytes, "<|im_start|>", "<|zz_start|>");
        rename(bytes, "<|im_end|>", "<|zz_end|>");
        Path file = Files.write(dir.resolve("no-markers.gguf"), bytes);
        GgufFile gguf = GgufFile.read(file);
        assertThat(gguf.chatTemplate()).isNull();
        assertThatThrownBy(() -> TurnFormat.require(gguf))
                .isInstanceOf(GgufException.class)
                .hasMessageContaining(file.toString())
                .hasMessageContaining("no chat template")
                .hasMessageContaining("tokenizer.chat_template")
                .hasMessageContaining("<start_of_turn>");
        assertThatThrownBy(() -> ModelFile.of(gguf)).isInstanceOf(GgufException.class);
        Path chatMl = Files.write(
                dir.resolve("chatml-markers.gguf"),
                TinyGguf.tiny().chatTemplate(null).bytes());
        assertThat(TurnFormat.require(GgufFile.read(chatMl))).isEqualTo(TurnFormat.CHATML);
    }

    private static void rename(byte[] bytes, String from, String to) {
        byte[] a = from.getBytes(StandardCharsets.UTF_8);
        byte[] b = to.getBytes(StandardCharsets.UTF_8);
        int found = 0;
        for (int i = 0; i + a.length <= bytes.length; i++) {
            if (java.util.Arrays.equals(bytes, i, i + a.length, a, 0, a.length)) {
                System.arraycopy(b, 0, bytes, i, b.length);
                found++;
            }
        }
        assertThat(found).isEqualTo(1);
    }
}
