package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The engine choice's pure parts: what is forced, where FFM can run, and a library the JNI engine would ignore. */
class EngineChoiceTest {
    @Test
    void aLibraryNamedForTheFfmEngineIsReportedWhenTheJniEngineRuns() {
        assertThat(EngineChoice.ignoredLibrary(null, "/cache/lib/libllama.so", "JDK 21 on Linux"))
                .contains("OAM_LLAMA_LIBRARY=/cache/lib/libllama.so is not used")
                .contains("JDK 21 on Linux")
                .contains("JDK 22 or newer");
        assertThat(EngineChoice.ignoredLibrary("/p/libllama.so", "/v/libllama.so", "OAM_LLAMA_ENGINE=jni"))
                .contains("/p/libllama.so")
                .doesNotContain("/v/");
    }

    @Test
    void nothingIsReportedWhenNoLibraryIsNamed() {
        assertThat(EngineChoice.ignoredLibrary(null, null, "JDK 21 on Linux")).isNull();
        assertThat(EngineChoice.ignoredLibrary(" ", "", "JDK 21 on Linux")).isNull();
    }

    @Test
    void ffmRunsOnJdk22OrNewerOnLinuxAndMacOsOnly() {
        assertThat(EngineChoice.ffmPossible(21, "Linux")).isFalse();
        assertThat(EngineChoice.ffmPossible(22, "Linux")).isTrue();
        assertThat(EngineChoice.ffmPossible(25, "Mac OS X")).isTrue();
        assertThat(EngineChoice.ffmPossible(25, "Windows 11")).isFalse();
    }
}
