package dev.oam.model.llama;

import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.SlotEngine;
import dev.oam.model.llama.gguf.GgufException;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.jni.JniEngine;
import dev.oam.testing.gguf.TinyGguf;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * The engines of the engine tests, opened once per test JVM and never closed for real: the binding cannot free a model,
 * so reloading in every test class would leak. Files go to {@code target/test-models}.
 */
public final class TinyEngines {
    public static final Path MODELS = Path.of("target", "test-models").toAbsolutePath();
    private static final Map<String, SlotEngine> OPEN = new HashMap<>();
    /** What the FFM engines opened here report; tests switch its parts on and off. */
    static final ProbeObserver PROBES = new ProbeObserver();

    private TinyEngines() {}

    /** Whether the FFM engine can run in this JVM (JDK 22+ on Linux or macOS). */
    static boolean ffmPossible() {
        return EngineChoice.ffmPossible(Runtime.version().feature(), System.getProperty("os.name", ""));
    }

    /** The tiny ChatML model on the JNI engine: 2 slots of 512 tokens, 1 thread. */
    public static JniEngine chatMl() {
        return (JniEngine) chatMl(EngineChoice.Kind.JNI);
    }

    /** The tiny ChatML model on {@code kind}: 2 slots of 512 tokens, 1 thread. */
    public static synchronized SlotEngine chatMl(EngineChoice.Kind kind) {
        return OPEN.computeIfAbsent(
                "chatml-" + kind,
                k -> open(
                        TinyGguf.tiny(),
                        "tiny-chatml.gguf",
                        EngineSettings.defaults().withContextSize(512).withSlots(2),
                        kind));
    }

    /** The tiny ChatML model in a file of its own with 4 lanes of 2,048 tokens (the batching tests). */
    static synchronized SlotEngine lanes(EngineChoice.Kind kind) {
        return OPEN.computeIfAbsent(
                "lanes-" + kind,
                k -> open(
                        TinyGguf.tiny().name("tiny-lanes"),
                        "tiny-lanes.gguf",
                        EngineSettings.defaults().withContextSize(2048).withSlots(4),
                        kind));
    }

    /** The same weights without {@code tokenizer.chat_template}: 1 slot of 128 tokens. */
    public static synchronized SlotEngine noTemplate(EngineChoice.Kind kind) {
        return OPEN.computeIfAbsent(
                "plain-" + kind,
                k -> open(
                        TinyGguf.tiny().name("tiny-no-template").chatTemplate(null),
                        "tiny-no-template.gguf",
                        EngineSettings.defaults().withContextSize(128),
                        kind));
    }

    private static SlotEngine open(
            TinyGguf.Builder builder, String fileName, EngineSettings settings, EngineChoice.Kind kind) {
        try {
            Path file = MODELS.resolve(fileName);
            if (!java.nio.file.Files.exists(file)) {
                builder.write(file);
            }
            return (SlotEngine) EngineChoice.open(
                    GgufFile.read(file),
                    settings.withThreads(1).withThreadsBatch(1),
                    kind,
                    SystemSettings.natives(),
                    SystemSettings.tuning(),
                    PROBES);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GgufException e) {
            throw new IllegalStateException(e);
        }
    }
}
