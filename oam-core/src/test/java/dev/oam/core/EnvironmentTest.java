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
}
