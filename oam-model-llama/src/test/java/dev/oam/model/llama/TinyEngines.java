package dev.oam.model.llama;

import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The engines of the engine tests, opened once per test JVM and never closed for real: the binding cannot free
 * a model, so reloading in every test class would leak. Files go to {@code target/test-models}.
 */
final class TinyEngines {
    static final Path MODELS = Path.of("target", "test-models").toAbsolutePath();
    private static LlamaEngine chatMl;
    private static LlamaEngine noTemplate;

    private TinyEngines() {}

    /** The tiny ChatML model: 2 slots of 512 tokens, 1 thread. */
    static synchronized LlamaEngine chatMl() {
        if (chatMl == null) {
            chatMl = open(TinyGguf.tiny(), "tiny-chatml.gguf", EngineSettings.defaults().withContextSize(512).withSlots(2));
        }
        return chatMl;
    }

    /** The same weights without {@code tokenizer.chat_template}: 1 slot of 128 tokens. */
    static synchronized LlamaEngine noTemplate() {
        if (noTemplate == null) {
            noTemplate = open(TinyGguf.tiny().name("tiny-no-template").chatTemplate(null), "tiny-no-template.gguf",
                    EngineSettings.defaults().withContextSize(128));
        }
        return noTemplate;
    }

    private static LlamaEngine open(TinyGguf.Builder builder, String fileName, EngineSettings settings) {
        try {
            Path file = MODELS.resolve(fileName);
            builder.write(file);
            return LlamaEngine.open(GgufFile.read(file), settings.withThreads(1).withThreadsBatch(1));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GgufException e) {
            throw new IllegalStateException(e);
        }
    }
}
