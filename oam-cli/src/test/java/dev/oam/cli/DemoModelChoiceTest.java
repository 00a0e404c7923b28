package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.testing.gguf.TinyGguf;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code oam demo tavern} plays its own script only when there is no system model: the default model in the model cache
 * (a stand-in GGUF where a pull puts it, with its mark) is one; and Mira's tools name only the menu's items.
 */
class DemoModelChoiceTest {
    @TempDir
    Path dir;

    private static Environment variables(Map<String, String> values) {
        return values::get;
    }

    @Test
    void theCachedDefaultModelIsUsedAndTheScriptOnlyWithoutAnyModel() throws Exception {
        Path cache = Files.createDirectories(dir.resolve("cache"));
        Path empty = Files.createDirectories(dir.resolve("empty"));
        assertThat(DemoCommand.Tavern.ownScript(variables(Map.of("OAM_MODEL_CACHE", empty.toString()))))
                .isTrue();
        TinyGguf.tiny().name("default-stand-in").write(cache.resolve("SmolLM2-135M-Instruct.Q4_1.gguf"));
        Files.writeString(cache.resolve("SmolLM2-135M-Instruct.Q4_1.gguf.sha256-ok"), "");
        assertThat(DemoCommand.Tavern.ownScript(variables(Map.of("OAM_MODEL_CACHE", cache.toString()))))
                .isFalse();
        assertThat(DemoCommand.Tavern.ownScript(
                        variables(Map.of("OAM_MODEL_CACHE", cache.toString(), "OAM_MODEL", "none"))))
                .isTrue();
        assertThat(DemoCommand.Tavern.ownScript(
                        variables(Map.of("OAM_MODEL_CACHE", empty.toString(), "OAM_MODEL", "model.gguf"))))
                .isFalse();
        assertThat(DemoCommand.Tavern.ownScript(
                        variables(Map.of("OAM_MODEL_CACHE", empty.toString(), "OAM_SCRIPT", "[]"))))
                .isFalse();
    }

    @Test
    void miraCanOrderOnlyWhatTheMenuHas() throws Exception {
        DemoCommand.Tavern tavern = new DemoCommand.Tavern();
        tavern.menu.put("ale", new int[] {2, 20});
        tavern.menu.put("rabbit stew", new int[] {5, 3});
        ObjectNode params = tavern.npcParams();
        List<String> seen = new ArrayList<>();
        for (JsonNode tool : params.path("tools")) {
            List<String> items = new ArrayList<>();
            tool.path("parameters").path("properties").path("item").path("enum").forEach(v -> items.add(v.asText()));
            seen.add(tool.path("name").asText() + "=" + items);
        }
        assertThat(seen).containsExactly("check_menu=[, ale, rabbit stew]", "take_order=[ale, rabbit stew]");
    }
}
