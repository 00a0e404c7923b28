package dev.oam.bridge.game;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.core.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code npc/state}'s {@code modelState} and {@code npc/restore}'s {@code state.modelState} (issue 40) where no model
 * keeps a state: a scripted model ignores it; a file name out of the save folder, or no folder at all, is a warning and
 * the JSON save is unchanged; a restore whose reference is unusable restores from the JSON with a warning. The FFM
 * engine's saving and loading are tested in oam-model-llama (FfmStateTest, FfmNpcStateTest).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ModelStateSaveTest {
    private static final String SCRIPT =
            "{\"type\":\"scripted\",\"steps\":[{\"json\":{\"line\":\"Hmph.\",\"emotion\":\"neutral\"}}]}";
    private final List<String> lines = new CopyOnWriteArrayList<>();

    @TempDir
    Path saves;

    private BridgeEngine engine(Path folder) {
        BridgeEngine engine = new BridgeEngine(BridgeConfiguration.builder().build(), lines::add);
        engine.extension(GameExtension.class).orElseThrow().saveFolder(folder);
        return engine;
    }

    private static JsonNode call(BridgeEngine engine, String method, String params) throws Exception {
        return engine.call(method, Json.parse(params)).get(10, TimeUnit.SECONDS);
    }

    private static void create(BridgeEngine engine) throws Exception {
        call(
                engine,
                "npc/create",
                "{\"npc\":\"gorm\",\"persona\":{\"name\":\"Gorm\",\"role\":\"smith\"},\"model\":" + SCRIPT + "}");
        call(engine, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Hello.\"}");
    }

    @Test
    void aScriptedModelIgnoresModelState() throws Exception {
        try (BridgeEngine engine = engine(saves)) {
            create(engine);
            JsonNode plain = call(engine, "npc/state", "{\"npc\":\"gorm\"}");
            JsonNode saved = call(engine, "npc/state", "{\"npc\":\"gorm\",\"modelState\":true}");
            assertThat(saved.has("warnings")).as("%s", saved).isFalse();
            assertThat(saved.path("state")).isEqualTo(plain.path("state"));
            try (var files = Files.list(saves)) {
                assertThat(files).isEmpty();
            }
        }
    }

    @Test
    void aFileOutOfTheSaveFolderOrNoFolderIsAWarning() throws Exception {
        try (BridgeEngine engine = engine(saves)) {
            create(engine);
            for (String name : List.of("../gorm.state", "/tmp/gorm.state", "a/../../gorm.state")) {
                JsonNode saved = call(
                        engine,
                        "npc/state",
                        "{\"npc\":\"gorm\",\"modelState\":"
                                + Json.write(Json.mapper().valueToTree(name)) + "}");
                assertThat(saved.path("warnings").toString())
                        .as(name)
                        .contains("not saved")
                        .containsAnyOf("leads out of the save folder", "is absolute");
                assertThat(saved.path("state").has("modelState")).isFalse();
            }
            Files.createSymbolicLink(saves.resolve("link"), Files.createTempDirectory("oam-outside"));
            JsonNode linked = call(engine, "npc/state", "{\"npc\":\"gorm\",\"modelState\":\"link/gorm.state\"}");
            assertThat(linked.path("warnings").toString()).contains("through a link");
            JsonNode inside = call(engine, "npc/state", "{\"npc\":\"gorm\",\"modelState\":\"new/gorm.state\"}");
            assertThat(inside.has("warnings"))
                    .as("a scripted model ignores it: %s", inside)
                    .isFalse();
            assertThatThrownBy(() -> call(engine, "npc/state", "{\"npc\":\"gorm\",\"modelState\":5}"))
                    .hasMessageContaining("modelState");
        }
        try (BridgeEngine engine = engine(null)) {
            create(engine);
            JsonNode saved = call(engine, "npc/state", "{\"npc\":\"gorm\",\"modelState\":\"gorm.state\"}");
            assertThat(saved.path("warnings").toString()).contains("no save folder is configured", "OAM_SAVE_DIR");
        }
    }

    @Test
    void aRestoreWithAnUnusableReferenceRestoresFromTheJson() throws Exception {
        try (BridgeEngine engine = engine(saves)) {
            create(engine);
            JsonNode state = call(engine, "npc/state", "{\"npc\":\"gorm\"}").path("state");
            ((com.fasterxml.jackson.databind.node.ObjectNode) state)
                    .set("modelState", Json.object().put("file", "../elsewhere.state"));
            JsonNode restored = call(
                    engine,
                    "npc/restore",
                    "{\"npc\":\"gorm2\",\"state\":" + Json.write(state) + ",\"model\":" + SCRIPT + "}");
            assertThat(restored.path("npc").asText()).isEqualTo("gorm2");
            assertThat(restored.path("warnings").toString()).contains("not restored", "leads out of the save folder");
            JsonNode again = call(engine, "npc/state", "{\"npc\":\"gorm2\"}").path("state");
            assertThat(again.path("transcript").path("entries").size())
                    .isEqualTo(state.path("transcript").path("entries").size());
        }
    }
}
