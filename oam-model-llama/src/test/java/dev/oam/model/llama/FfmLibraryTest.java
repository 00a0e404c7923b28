package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.oam.core.Environment;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.NativeLibrary;
import dev.oam.model.llama.engine.NativeSettings;
import dev.oam.model.llama.engine.SlotEngine;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Which llama.cpp library the FFM engine drives: the binding jar's b4916 unless {@code OAM_LLAMA_LIBRARY} (or
 * {@code oam.llama.library}) names the project-built one (bin/build-llama), whose newer API has other struct layouts.
 * The module's tests run once on each when bin/test provides the built library ({@code OAM_TEST_LLAMA_LIBRARY}); the
 * run says which it expects in {@code oam.test.llamaLibrary}.
 */
class FfmLibraryTest {
    private static Object call(String method, Class<?>[] types, Object... args) throws Throwable {
        Class<?> type = Class.forName("dev.oam.model.llama.ffm.NativeLoader");
        Method m = type.getDeclaredMethod(method, types);
        m.setAccessible(true);
        try {
            return m.invoke(null, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** The natives an entry point reads from these variables and switches. */
    private static NativeSettings natives(Map<String, String> variables, Map<String, String> properties) {
        return LlamaSettings.read(Environment.of(variables, properties)).natives();
    }

    @Test
    void theEngineRunsOnTheLibraryThisRunAskedFor() throws Throwable {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        Object bindings = call("library", new Class<?>[] {NativeSettings.class}, SystemSettings.natives());
        Field api = bindings.getClass().getDeclaredField("api");
        api.setAccessible(true);
        String expected = "vendored".equals(System.getProperty("oam.test.llamaLibrary")) ? "VENDORED" : "B4916";
        assertThat(api.get(bindings)).hasToString(expected);
        // and a model runs on it: a greedy answer of the tiny lanes model
        SlotEngine engine = TinyEngines.lanes(EngineChoice.Kind.FFM);
        EngineResult result = engine.generate(
                new EngineRequest("the goblin guards the door", null, 8, 0, 0, 1, 1),
                "library-check",
                d -> {},
                dev.oam.core.model.CancellationToken.create());
        assertThat(result.outputTokens()).isPositive();
    }

    @Test
    void openMpThreadsSleepAtABarrierUnlessTheHostChoseTheWait() throws Throwable {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        assumeTrue(
                System.getenv("OMP_WAIT_POLICY") == null && System.getenv("GOMP_SPINCOUNT") == null,
                "the environment of this run chose OpenMP's wait itself");
        call("library", new Class<?>[] {NativeSettings.class}, SystemSettings.natives());
        // set before the library (and with it the OpenMP runtime, which reads it once) loaded
        assertThat(dev.oam.core.os.Posix.getenv("OMP_WAIT_POLICY")).contains("passive");
    }

    @Test
    void aNamedLibraryThatIsNotAFileIsReportedWithTheSettingsName(@TempDir Path dir) {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        NativeSettings missing =
                natives(Map.of("OAM_LLAMA_LIBRARY", dir.resolve("libllama.so").toString()), Map.of());
        assertThatThrownBy(() -> call("configuredLibrary", new Class<?>[] {NativeSettings.class}, missing))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("OAM_LLAMA_LIBRARY=" + dir.resolve("libllama.so"))
                .hasMessageContaining("not a readable file");
    }

    @Test
    void thePropertyWinsOverTheVariableAndBlankMeansUnset(@TempDir Path dir) throws Throwable {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        Path file = Files.writeString(dir.resolve("libllama.so"), "not a library");
        NativeSettings both = natives(
                Map.of("OAM_LLAMA_LIBRARY", "/nowhere/libllama.so"), Map.of("oam.llama.library", file.toString()));
        assertThat(call("configuredLibrary", new Class<?>[] {NativeSettings.class}, both))
                .isEqualTo(file.toAbsolutePath());
        NativeSettings blank = natives(Map.of("OAM_LLAMA_LIBRARY", " "), Map.of("oam.llama.library", " "));
        assertThat(call("configuredLibrary", new Class<?>[] {NativeSettings.class}, blank))
                .isNull();
    }

    @Test
    void theJarsLibraryIsRefusedAsTheVendoredApi() throws Throwable {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        Path jars = (Path) NativeLibrary.class
                .getDeclaredMethod("extractedLibrary", NativeSettings.class)
                .invoke(null, SystemSettings.natives());
        Class<?> apiType = Class.forName("dev.oam.model.llama.ffm.LlamaNative$Api");
        Object vendored = apiType.getEnumConstants()[1];
        assertThat(vendored).hasToString("VENDORED");
        // no build record next to it, so the layouts of the newer API are never used on it
        assertThatThrownBy(() -> call(
                        "open",
                        new Class<?>[] {Path.class, apiType, NativeSettings.class},
                        jars,
                        vendored,
                        SystemSettings.natives()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("oam-build.properties");
    }

    @Test
    void aBuildRecordNamingAnotherSourceIsRefused(@TempDir Path dir) throws Throwable {
        assumeTrue(TinyEngines.ffmPossible(), "FFM needs JDK 22+ on Linux or macOS");
        Path jars = (Path) NativeLibrary.class
                .getDeclaredMethod("extractedLibrary", NativeSettings.class)
                .invoke(null, SystemSettings.natives());
        Path library = Files.createSymbolicLink(dir.resolve("libllama.so"), jars);
        Files.writeString(dir.resolve("oam-build.properties"), "source=llama_cpp_python-0.3.35.tar.gz\nsha256=00\n");
        Class<?> apiType = Class.forName("dev.oam.model.llama.ffm.LlamaNative$Api");
        assertThatThrownBy(() -> call(
                        "open",
                        new Class<?>[] {Path.class, apiType, NativeSettings.class},
                        library,
                        apiType.getEnumConstants()[1],
                        SystemSettings.natives()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining(
                        "names llama_cpp_python-0.3.35.tar.gz (00), not one of the sources whose struct layouts are verified");
    }

    @Test
    void theBuiltLibraryIsRefusedAsB4916() throws Throwable {
        String built = System.getProperty("oam.llama.library");
        assumeTrue(TinyEngines.ffmPossible() && built != null && !built.isBlank(), "needs the project-built library");
        Class<?> apiType = Class.forName("dev.oam.model.llama.ffm.LlamaNative$Api");
        Object b4916 = apiType.getEnumConstants()[0];
        assertThatThrownBy(() -> call(
                        "open",
                        new Class<?>[] {Path.class, apiType, NativeSettings.class},
                        Path.of(built),
                        b4916,
                        SystemSettings.natives()))
                .isInstanceOf(UnsupportedOperationException.class)
                .hasMessageContaining("LLAMA_BUILD_NUMBER");
    }
}
