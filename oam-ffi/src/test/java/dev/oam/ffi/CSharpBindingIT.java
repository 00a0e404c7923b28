package dev.oam.ffi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.ffi.NativeFiles.Run;
import dev.oam.testing.RealModel;
import dev.oam.testing.gguf.TinyGguf;
import dev.oam.testing.hub.FakeHub;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * bindings/csharp on Mono: {@code bindings/csharp/run-tests} compiles the binding with mcs (also its Unity parts,
 * against a stand-in for UnityEngine) and runs its suite over this build's libOpenAppleModelsFFI. It installs Mono with
 * apt-get when it is missing (bin/lib/mono.sh) and fails the build when Mono cannot be had or a C# test fails. Its
 * RealModelTests run a llama session on each real model ({@link RealModel}): Gemma 3 270M and SmolLM2-135M-Instruct,
 * the C ABI's only run on SmolLM2 (NativeRealModelIT runs the whole suite on Gemma).
 */
@Tag("real-model")
@Tag("system-package")
@Timeout(value = 20, unit = TimeUnit.MINUTES)
class CSharpBindingIT {
    private static Path bindings() {
        return NativeFiles.repositoryRoot().resolve("bindings/csharp");
    }

    @Test
    void theSuitePassesOnMono(@TempDir Path temp) throws IOException {
        Path tiny = temp.resolve("csharp-tiny.gguf");
        TinyGguf.tiny().name("csharp-tiny").write(tiny);
        Map<String, String> env = new HashMap<>();
        // ModelPullTests: a loopback hub and an empty cache of its own, for the whole process (the library reads them).
        FakeHub hub = FakeHub.start();
        hub.addFile("owner", "repo", "csharp-tiny.gguf", Files.readAllBytes(tiny));
        env.put("HF_ENDPOINT", hub.uri().toString());
        env.put("OAM_MODEL_CACHE", temp.resolve("cache").toString());
        env.put("OAM_FFI_DIR", NativeFiles.dir().toString());
        env.put("OAM_CSHARP_OUT", NativeFiles.dir().resolveSibling("csharp").toString());
        env.put("OAM_JAVA_HOME", NativeFiles.javaHome());
        env.put("OAM_CLASSPATH", null);
        env.put("OAM_BRIDGE_LOG", null);
        env.put("OAM_JVM_OPTIONS", null);
        // RealModelTests: a llama session on each real model through the library.
        for (RealModel model : RealModel.values()) {
            env.put(model.variable(), model.path().toString());
        }
        env.put(
                "OAM_NATIVE_DIR",
                NativeFiles.dir().resolveSibling("llama-native").toString());
        env.put("OAM_LLAMA_THREADS", "1");
        env.put("OAM_LLAMA_THREADS_BATCH", "2");
        env.put("OAM_LLAMA_CONTEXT", "2048");
        Run run;
        try {
            run = NativeFiles.run(List.of(bindings().resolve("run-tests").toString()), env, 1100);
        } finally {
            hub.close();
        }
        System.err.println(run.out());
        System.err.println(run.err());
        assertThat(run.exit()).as(run.describe()).isZero();
        assertThat(run.out())
                .containsPattern("\n\\d+ passed, 0 failed, \\d+ tests")
                .contains("ok    BridgeTests.AToolRoundTripWithStreaming")
                .contains("ok    LifetimeTests.EightThreadsAtOnceGetEveryAnswerExactlyOnce")
                .contains("ok    LifetimeTests.AHundredCreateDisposeCyclesLeaveNoThreads")
                .contains("ok    ModelPullTests.APullReportsProgressThroughIProgressAndThePulledNameRuns")
                .contains("ok    RealModelTests.ALlamaSessionOnGemmaCallsAForcedToolWithValidArgumentsAndAnswers")
                .contains("ok    RealModelTests.ALlamaSessionOnSmolLM2CallsAForcedToolWithValidArgumentsAndAnswers")
                .doesNotContain("FAIL");
    }

    @Test
    void theReadmeShowsTheExampleThatTheBuildCompiles() throws IOException {
        String example = Files.readString(bindings().resolve("examples/GateKeeper.cs"), StandardCharsets.UTF_8);
        String readme =
                Files.readString(NativeFiles.repositoryRoot().resolve("bindings/README.md"), StandardCharsets.UTF_8);
        assertThat(readme).contains(example.strip());
    }
}
