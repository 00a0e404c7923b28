package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ModelListener;
import dev.oam.core.model.ModelParameterException;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The backend: model values, file checks before native code, one engine per file, system models. */
class LlamaBackendTest {
    private static final Path DIR = TinyEngines.MODELS.resolve("backend");
    private static Path tiny;
    /** One backend for the tests that load the tiny file: each backend loads its files once, and loads leak. */
    private static final LlamaBackend LOADING = new LlamaBackend(
            LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 1, 1, 512), List.of("en", "de"));

    @BeforeAll
    static void writeModel() throws IOException {
        tiny = DIR.resolve("backend-tiny.gguf");
        TinyGguf.tiny().name("backend-tiny").write(tiny);
    }

    private static ObjectNode spec(String json) throws Exception {
        return (ObjectNode) Json.parse(json);
    }

    private static ModelParameterException refused(LlamaBackend backend, String json) throws Exception {
        ObjectNode value = spec(json);
        return catchThrowableOfType(ModelParameterException.class, () -> backend.create(value, "model"));
    }

    @Test
    void badModelValuesAreInvalidParamsNamingTheMember() throws Exception {
        LlamaBackend backend = new LlamaBackend(
                LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 0, 0, 0), List.of("en"));
        assertThat(refused(backend, "{\"type\":\"llama\"}").getMessage()).contains("'model.path'");
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":5}").getMessage())
                .contains("'model.path' must be");
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"a.gguf\",\"gpu\":1}")
                        .getMessage())
                .contains("'model.gpu' is not a member");
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"a.gguf\",\"contextSize\":10}")
                        .getMessage())
                .contains("'model.contextSize' must be an integer from 256");
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"a.gguf\",\"threads\":1.5}")
                        .getMessage())
                .contains("'model.threads'");
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"a.gguf\",\"seed\":-1}")
                        .getMessage())
                .contains("'model.seed' must be a non-negative integer");
        // A valid seed: the value is refused for its file, which does not exist.
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"a.gguf\",\"seed\":1}")
                        .member())
                .isEqualTo("model.path");
        assertThat(refused(backend, "{\"type\":\"llama\"}").isMissing()).isTrue();
    }

    @Test
    void aSessionsBackendOtherThanTheProcesssIsRefusedBecauseTheBackendIsProcessWide() throws Exception {
        LlamaSettings settings =
                LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 0, 0, 0);
        LlamaBackend backend = new LlamaBackend(settings, List.of("en"));
        ModelParameterException unknown =
                refused(backend, "{\"type\":\"llama\",\"path\":\"a.gguf\",\"backend\":\"opencl\"}");
        assertThat(unknown.member()).isEqualTo("model.backend");
        assertThat(unknown.getMessage()).contains("must be one of auto, cpu, vulkan, cuda, metal");
        String process = settings.natives().backend();
        String other = process.equals("vulkan") ? "cuda" : "vulkan";
        ModelParameterException conflict = refused(
                backend, "{\"type\":\"llama\",\"path\":\"a.gguf\",\"backend\":\"" + other.toUpperCase() + "\"}");
        assertThat(conflict.member()).isEqualTo("model.backend");
        assertThat(conflict.getMessage())
                .contains("chosen once per process", "OAM_LLAMA_BACKEND=" + process, "OAM_LLAMA_BACKEND=" + other);
        // the process's own backend, and auto, are accepted: the value is then refused for its file, which is absent
        for (String same : List.of(process, "auto")) {
            assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"a.gguf\",\"backend\":\"" + same + "\"}")
                            .member())
                    .isEqualTo("model.path");
        }
        assertThatCode(() -> LlamaBackend.checkBackend("cuda", "cuda", "model")).doesNotThrowAnyException();
        assertThat(catchThrowableOfType(
                                ModelParameterException.class, () -> LlamaBackend.checkBackend("cpu", "auto", "model"))
                        .getMessage())
                .contains("CUDA, then Vulkan, Metal, the CPU", "gpuLayers 0");
    }

    @Test
    void filesAreCheckedBeforeNativeCodeSeesThem() throws Exception {
        LlamaBackend backend = new LlamaBackend(
                LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 0, 0, 0), List.of("en"));
        Path missing = DIR.resolve("missing.gguf");
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"" + missing + "\"}")
                        .getMessage())
                .contains("'model.path'")
                .contains("does not exist");
        Path text = DIR.resolve("not-a-model.gguf");
        Files.writeString(text, "hello, I am not a model");
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"" + text + "\"}")
                        .getMessage())
                .contains("'model.path'")
                .contains("is not a GGUF file");
        Path truncated = DIR.resolve("truncated.gguf");
        byte[] bytes = Files.readAllBytes(tiny);
        Files.write(truncated, java.util.Arrays.copyOf(bytes, bytes.length / 2));
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"" + truncated + "\"}")
                        .getMessage())
                .contains("'model.path'")
                .contains("truncated");
    }

    @Test
    void aFileWithoutChatTemplateGetsItsVocabularysTurnFormatWithAWarningOrIsRefusedWhenItHasNone() throws Exception {
        LlamaBackend backend = new LlamaBackend(
                LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 0, 0, 0), List.of("en"));
        byte[] bytes = TinyGguf.tiny().name("no-markers").chatTemplate(null).bytes();
        String plain = new String(bytes, java.nio.charset.StandardCharsets.ISO_8859_1)
                .replace("<|im_start|>", "<|zz_start|>")
                .replace("<|im_end|>", "<|zz_end|>");
        Path noMarkers = Files.write(
                DIR.resolve("no-markers.gguf"), plain.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
        ModelParameterException error = refused(backend, "{\"type\":\"llama\",\"path\":\"" + noMarkers + "\"}");
        assertThat(error.member()).isEqualTo("model.path");
        assertThat(error.getMessage())
                .contains("'model.path'")
                .contains(noMarkers.toString())
                .contains("no chat template");
        assertThatThrownBy(() -> backend.systemModel(noMarkers.toString(), null))
                .hasMessageContaining("no chat template");

        Path chatMlMarkers = DIR.resolve("backend-no-template.gguf");
        TinyGguf.tiny().name("backend-plain").chatTemplate(null).write(chatMlMarkers);
        LanguageModel warned = LOADING.create(spec("{\"type\":\"llama\",\"path\":\"" + chatMlMarkers + "\"}"), "model");
        assertThat(warned.warnings())
                .singleElement()
                .asString()
                .contains("'backend-plain'")
                .contains("no chat template")
                .contains("ChatML turn format");
        assertThat(LOADING.create(spec("{\"type\":\"llama\",\"path\":\"" + tiny + "\"}"), "model")
                        .warnings())
                .isEmpty();
    }

    @Test
    void aChatTemplateThatCannotRenderAConversationIsStillReportedToSessions() throws Exception {
        // The check runs on the loading thread (the host's start does not wait for it); warnings() waits for it.
        Path broken = DIR.resolve("backend-broken-template.gguf");
        TinyGguf.tiny()
                .name("backend-broken")
                .chatTemplate("{{ raise_exception('no system messages') }}")
                .write(broken);

        LanguageModel model = LOADING.create(spec("{\"type\":\"llama\",\"path\":\"" + broken + "\"}"), "model");

        assertThat(model.warnings())
                .singleElement()
                .asString()
                .contains("'backend-broken'")
                .contains("cannot be used")
                .contains("ChatML");
    }

    @Test
    void oneEngineServesEveryModelNamingTheFileAndItsSettingsAreFixedByTheFirstUse() throws Exception {
        LlamaBackend backend = LOADING;
        LanguageModel first =
                backend.create(spec("{\"type\":\"llama\",\"path\":\"" + tiny + "\",\"contextSize\":512}"), "model");
        // the same file through another spelling of its path
        String other = DIR.resolve("..")
                .resolve("backend")
                .resolve("backend-tiny.gguf")
                .toString();
        LanguageModel second =
                backend.create(spec("{\"type\":\"llama\",\"path\":\"" + other + "\",\"seed\":7}"), "model");
        assertThat(first.contextSize()).isEqualTo(512);
        assertThat(second.contextSize()).isEqualTo(512);
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"" + tiny + "\",\"contextSize\":1024}")
                        .getMessage())
                .contains("'model.contextSize'")
                .contains("already loaded with contextSize 512");

        ModelResponse answer = first.respond(greedyPrompt(), ModelListener.NONE, CancellationToken.create());
        assertThat(answer).isInstanceOf(ModelResponse.Answer.class);
        ModelAvailability ready = second.availability();
        assertThat(ready.available()).isTrue();
        assertThat(ready.variant()).isEqualTo("backend-tiny");
        assertThat(ready.contextSize()).isEqualTo(512);
        assertThat(ready.supportedLanguages()).containsExactly("en", "de");
        // exact counts from the tokenizer once loaded ("the player should attack the goblin" is 6 tokens)
        assertThat(second.countTokens("the player should attack the goblin")).isEqualTo(6);
    }

    @Test
    void aContextLargerThanTheModelWasTrainedForIsRefused() throws Exception {
        Path small = DIR.resolve("small-context.gguf");
        TinyGguf.tiny().contextLength(1024).write(small);
        LlamaBackend backend = new LlamaBackend(
                LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 0, 0, 0), List.of("en"));
        assertThat(refused(backend, "{\"type\":\"llama\",\"path\":\"" + small + "\",\"contextSize\":2048}")
                        .getMessage())
                .contains("'model.contextSize'")
                .contains("trained for (1024 tokens)");
    }

    @Test
    void systemModelsAreGgufPathsAndTheirNameCanBeGiven() throws Exception {
        LlamaBackend backend = LOADING;
        assertThat(backend.servesSystemModel("/models/qwen2.5-0.5b-instruct-q4_k_m.gguf"))
                .isTrue();
        assertThat(backend.servesSystemModel("models/X.GGUF")).isTrue();
        assertThat(backend.servesSystemModel("http://127.0.0.1:11434/v1")).isFalse();
        assertThat(backend.servesSystemModel(".gguf")).isFalse();
        assertThat(backend.servesSystemModel("llama-server:/models/x.gguf"))
                .as("the supervised llama-server's")
                .isFalse();
        assertThatThrownBy(() -> backend.systemModel(DIR.resolve("nope.gguf").toString(), null))
                .hasMessageContaining("does not exist");
        LanguageModel model = backend.systemModel(tiny.toString(), "Innkeeper 1B");
        model.respond(greedyPrompt(), ModelListener.NONE, CancellationToken.create());
        assertThat(model.availability().variant()).isEqualTo("Innkeeper 1B");
        assertThat(model.contextSize()).isEqualTo(512);
    }

    @Test
    void discoveryFindsTheBackend() {
        assertThat(ModelBackend.discover()).anyMatch(backend -> backend instanceof LlamaBackend);
        assertThat(new LlamaBackend().type()).isEqualTo("llama");
    }

    @Test
    void aClosedBackendCancelsNothingItDoesNotOwnAndRefusesNewModels() throws Exception {
        LlamaBackend backend = new LlamaBackend(
                LlamaSettings.read(dev.oam.core.Environment.system()).sized(1, 0, 0, 0), List.of("en"));
        backend.close();
        ObjectNode value = spec("{\"type\":\"llama\",\"path\":\"" + tiny + "\"}");
        assertThatThrownBy(() -> backend.create(value, "model")).isInstanceOf(IllegalStateException.class);
    }

    private static ModelRequest greedyPrompt() {
        return new ModelRequest(
                "You are a guard.",
                null,
                List.of(TranscriptEntry.Prompt.of("hello", null)),
                List.of(),
                ToolCallingMode.DISALLOWED,
                false,
                null,
                new GenerationOptions(0.0, 4, dev.oam.core.model.Sampling.GREEDY));
    }
}
