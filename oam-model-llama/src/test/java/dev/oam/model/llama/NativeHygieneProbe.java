package dev.oam.model.llama;

import dev.oam.core.model.CancellationToken;
import dev.oam.core.os.Posix;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.gguf.GgufFile;
import dev.oam.model.llama.jni.JniEngine;
import java.nio.file.Path;

/** Run by {@link NativeHygieneTest} in a child JVM: touches the engine's classes, then loads and runs the model. */
public final class NativeHygieneProbe {
    private NativeHygieneProbe() {}

    public static void main(String[] args) throws Exception {
        Class.forName(JniEngine.class.getName(), true, NativeHygieneProbe.class.getClassLoader());
        EngineSettings settings =
                EngineSettings.defaults().withContextSize(64).withThreads(1).withThreadsBatch(1);
        if (System.getProperty("de.kherud.llama.lib.path") != null) {
            System.err.println("library configured before the first model");
            System.exit(3);
        }
        String before = Posix.getenv("GGML_NO_BACKTRACE").orElse("<unset>");
        JniEngine engine = JniEngine.open(GgufFile.read(Path.of(args[0])), settings, SystemSettings.natives());
        System.err.println("GGML_NO_BACKTRACE before: " + before + ", after: "
                + Posix.getenv("GGML_NO_BACKTRACE").orElse("<unset>"));
        EngineResult result = engine.generate(
                new EngineRequest("hello guard", null, 8, 0, 0, 1, 1), "probe", d -> {}, CancellationToken.create());
        System.err.println("generated " + result.outputTokens() + " tokens; library in "
                + System.getProperty("de.kherud.llama.lib.path"));
        System.exit(0); // the binding's native server thread is never detached: the JVM would not end by itself
    }
}
