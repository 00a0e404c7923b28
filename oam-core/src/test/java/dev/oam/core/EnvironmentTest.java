package dev.oam.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The seam every setting is read through: the process's, a test's own, and settings over another. */
class EnvironmentTest {
    @Test
    void aMapIsExactlyItsVariablesAndHasNoProperties() {
        Environment environment = Environment.of(Map.of("OAM_MODEL", "/m.gguf", "EMPTY", ""));
        assertThat(environment.variable("OAM_MODEL")).isEqualTo("/m.gguf");
        assertThat(environment.variable("EMPTY")).isEmpty();
        assertThat(environment.variable("PATH")).isNull();
        assertThat(environment.property("oam.llama.engine")).isNull();
        Environment lambda = name -> "x";
        assertThat(lambda.property("oam.llama.engine")).isNull();
    }

    @Test
    void settingsOverABaseWinWhereSetEvenWhenEmpty() {
        Environment base = Environment.of(
                Map.of("OAM_MODEL", "/base.gguf", "OAM_API_KEY", "base", "PATH", "/bin"),
                Map.of("oam.llama.engine", "jni"));
        Environment settings = Environment.of(Map.of("OAM_MODEL", "/own.gguf", "OAM_API_KEY", ""));
        Environment bridge = settings.over(base);
        assertThat(bridge.variable("OAM_MODEL")).isEqualTo("/own.gguf");
        assertThat(bridge.variable("OAM_API_KEY")).isEmpty();
        assertThat(bridge.variable("PATH")).isEqualTo("/bin");
        assertThat(bridge.variable("HOME")).isNull();
        assertThat(bridge.property("oam.llama.engine")).isEqualTo("jni");
    }

    @Test
    void withoutUnsetsVariablesButKeepsProperties() {
        Environment base = Environment.of(Map.of("OAM_MODEL", "/m.gguf", "PATH", "/bin"), Map.of("os.name", "Linux"));
        Environment hidden = base.without(Set.of("OAM_MODEL"));
        assertThat(hidden.variable("OAM_MODEL")).isNull();
        assertThat(hidden.variable("PATH")).isEqualTo("/bin");
        assertThat(hidden.property("os.name")).isEqualTo("Linux");
    }

    @Test
    void nonBlankStripsAndTreatsBlankAsUnset() {
        Environment environment = Environment.of(Map.of("A", "  4 ", "B", "  "));
        assertThat(environment.nonBlank("A")).isEqualTo("4");
        assertThat(environment.nonBlank("B")).isNull();
        assertThat(environment.nonBlank("C")).isNull();
    }

    @Test
    void theSystemOneReadsTheProcess() {
        assertThat(Environment.system().property("java.version")).isEqualTo(System.getProperty("java.version"));
        assertThat(Environment.system().variable("PATH")).isEqualTo(System.getenv("PATH"));
        assertThat(Environment.system()).isSameAs(Environment.system());
    }

    @Test
    void anIntegerSettingIsParsedOnceWithItsBoundsAndABadValueIsAWarningAndNull() {
        java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
        Log.Level level = Log.level();
        Log.setStream(new java.io.PrintStream(captured, true, java.nio.charset.StandardCharsets.UTF_8));
        Log.setLevel(Log.Level.WARNING);
        try {
            Environment environment = Environment.of(Map.of("N", " 7 ", "LOW", "-2", "WORD", "many", "BLANK", " "));
            assertThat(environment.integer("N", -1, 10)).isEqualTo(7);
            assertThat(environment.integer("UNSET", -1, 10)).isNull();
            assertThat(environment.integer("BLANK", -1, 10)).isNull();
            assertThat(environment.integer("LOW", -1, 10)).isNull();
            assertThat(environment.integer("WORD", -1, 10)).isNull();
        } finally {
            Log.toSystemLogger();
            Log.setLevel(level);
        }
        assertThat(captured.toString(java.nio.charset.StandardCharsets.UTF_8))
                .contains("LOW='-2' is not an integer from -1 to 10; using the default")
                .contains("WORD='many' is not an integer from -1 to 10; using the default")
                .doesNotContain("BLANK")
                .doesNotContain("UNSET");
    }

    @Test
    void theCacheFolderIsOamCacheDirElseTheUsersCacheFolder() {
        assertThat(Environment.of(Map.of("OAM_CACHE_DIR", "/c", "XDG_CACHE_HOME", "/x"))
                        .cacheFolder())
                .isEqualTo(java.nio.file.Path.of("/c"));
        assertThat(Environment.of(Map.of("XDG_CACHE_HOME", "/x")).cacheFolder())
                .isEqualTo(java.nio.file.Path.of("/x/oam"));
        assertThat(Environment.of(Map.of(), Map.of("user.home", "/home/u")).cacheFolder())
                .isEqualTo(java.nio.file.Path.of("/home/u/.cache/oam"));
    }
}
