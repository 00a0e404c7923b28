package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.core.Environment;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ScriptedModel;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The commands' variables (OAM_SCRIPT, OAM_MODEL, NO_COLOR, TERM, PATH) read from an environment a test gives. */
class CliEnvironmentTest {
    @Test
    void theModelFlagsStandForTheirVariablesOverTheEnvironment() {
        ModelSource source = new ModelSource();
        source.system = Environment.of(Map.of("OAM_MODEL", "/env.gguf", "OAM_MODEL_NAME", "env", "OAM_API_KEY", "k"));
        assertThat(source.variable("OAM_MODEL")).isEqualTo("/env.gguf");
        source.model = "/flag.gguf";
        assertThat(source.variable("OAM_MODEL")).isEqualTo("/flag.gguf");
        assertThat(source.variable("OAM_MODEL_NAME")).isEqualTo("env");
        source.modelName = "flag";
        assertThat(source.environment().variable("OAM_MODEL_NAME")).isEqualTo("flag");
        assertThat(source.environment().variable("OAM_API_KEY")).isEqualTo("k");
    }

    @Test
    void oamScriptFromTheEnvironmentGivesAScriptedModel() {
        ModelSource source = new ModelSource();
        source.system = Environment.of(
                Map.of(ModelSource.SCRIPT_VARIABLE, "[{\"text\": \"hi\"}]", "OAM_MODEL", "/not/read.gguf"));
        LanguageModel model = source.resolve(List.of(), "oam respond");
        assertThat(model).isInstanceOf(ScriptedModel.class);
        assertThat(source.modelName()).isEqualTo("scripted");
    }

    @Test
    void noModelAnywhereIsAStandInNamedSystem(@TempDir Path emptyCache) {
        ModelSource source = new ModelSource();
        source.system = Environment.of(Map.of("OAM_MODEL_CACHE", emptyCache.toString()));
        assertThat(source.modelName()).isEqualTo("system");
        assertThat(source.resolve(List.of(), "oam respond").availability().available())
                .isFalse();
    }

    @Test
    void colourNeedsNoNoColorAndATerminalThatIsNotDumb() {
        assertThat(Tty.colorAllowed(Environment.of(Map.of()))).isTrue();
        assertThat(Tty.colorAllowed(Environment.of(Map.of("NO_COLOR", "")))).isTrue();
        assertThat(Tty.colorAllowed(Environment.of(Map.of("NO_COLOR", "1")))).isFalse();
        assertThat(Tty.colorAllowed(Environment.of(Map.of("TERM", "dumb")))).isFalse();
        assertThat(Tty.noColor(Environment.of(Map.of("NO_COLOR", "yes")))).isTrue();
    }

    @Test
    void aProgramIsFoundOnTheEnvironmentsPath(@TempDir Path folder) throws IOException {
        Path tool = Files.createFile(folder.resolve("npc-tool"));
        Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwx------"));
        Files.createFile(folder.resolve("not-executable"));
        Environment path = Environment.of(Map.of("PATH", "::/nowhere:" + folder));
        assertThat(CliTools.onPath("npc-tool", path)).isTrue();
        assertThat(CliTools.onPath("not-executable", path)).isFalse();
        assertThat(CliTools.onPath("npc-tool", Environment.of(Map.of()))).isFalse();
    }
}
