package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.game.GameExtension;
import dev.oam.core.json.Json;
import dev.oam.testing.Conversation;
import dev.oam.testing.InMemoryClient;
import dev.oam.testing.RealModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 40 through the protocol (an in-process bridge), on both real models and the FFM engine (both libraries, like
 * every Ffm*Test): {@code npc/state} with {@code modelState} writes the NPC's lane beside the save, and the NPC
 * {@code npc/restore}d from that save answers its next line, greedy, exactly as the NPC that never stopped did, reading
 * only what follows the saved state. One lane, so the restored state replaces whatever the lane held. A save without a
 * save folder, or naming a path out of it, says why in {@code warnings}; a restore whose file was edited reads again.
 */
@Tag("real-model")
@Timeout(900)
class FfmNpcStateTest {
    static final String OPTIONS = "{\"temperature\":0,\"compactAfterTurns\":0,\"maximumResponseTokens\":48}";
    static final String PERSONA = "{\"name\":\"Gorm\",\"role\":\"the village blacksmith\","
            + "\"personality\":\"Gruff but fair.\",\"knowledge\":[\"the bridge to Eastmarch collapsed last night\"]}";

    @TempDir
    Path saves;

    @Test
    void smolLM2() throws Exception {
        restoredNpcAnswersAsTheOneThatNeverStopped(RealModel.SMOLLM2);
    }

    @Test
    void gemma() throws Exception {
        restoredNpcAnswersAsTheOneThatNeverStopped(RealModel.GEMMA);
    }

    private void restoredNpcAnswersAsTheOneThatNeverStopped(RealModel real) throws Exception {
        Path file = real.pathIfSet();
        assumeTrue(
                TinyEngines.ffmPossible() && file != null && Files.isRegularFile(file),
                "needs " + real.variable() + " and JDK 22+");
        LlamaBackend backend = new LlamaBackend(SystemSettings.host().sized(1, 2, 2, 4096), List.of("en"));
        String spec = "{\"type\":\"llama\",\"path\":" + Json.write(Json.mapper().valueToTree(file.toString())) + "}";
        Path folder = saves.resolve(real.id());
        Files.createDirectories(folder);
        try (Conversation c = new Conversation(
                InMemoryClient.connect(BridgeConfiguration.builder()
                        .sharedBackends(List.of(backend))
                        .extensions(() -> new GameExtension().saveFolder(folder))),
                java.time.Duration.ofMinutes(10))) {
            c.call(
                    "create",
                    "npc/create",
                    "{\"npc\":\"gorm\",\"persona\":" + PERSONA + ",\"options\":" + OPTIONS + ",\"model\":" + spec
                            + "}");
            assertLine(c.call(1, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Hello there. Is the road east safe?\"}"));
            assertLine(c.call(2, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"Can you mend my sword by morning?\"}"));
            JsonNode saved = c.call("state", "npc/state", "{\"npc\":\"gorm\",\"modelState\":true}");
            assertThat(saved.path("warnings").isMissingNode()).as("%s", saved).isTrue();
            JsonNode reference = saved.path("state").path("modelState");
            assertThat(reference.path("file").asText()).isEqualTo("gorm.state");
            assertThat(Files.size(folder.resolve("gorm.state")))
                    .isEqualTo(reference.path("bytes").asLong())
                    .isPositive();
            System.out.printf(
                    "%s: model state of %d tokens, %d bytes (%.0f bytes per token)%n",
                    real.id(),
                    reference.path("tokens").asInt(),
                    reference.path("bytes").asLong(),
                    reference.path("bytes").asDouble()
                            / reference.path("tokens").asInt());

            String third = "{\"line\":\"What do I owe you?\",\"npc\":";
            JsonNode neverStopped = c.call(3, "npc/talk", third + "\"gorm\"}");
            assertLine(neverStopped);

            JsonNode restore = c.call(
                    "restore",
                    "npc/restore",
                    "{\"npc\":\"gorm2\",\"state\":" + Json.write(saved.path("state")) + ",\"model\":" + spec + "}");
            assertThat(restore.path("warnings").toString()).as("%s", restore).doesNotContain("model's state");
            JsonNode restored = c.call(4, "npc/talk", third + "\"gorm2\"}");
            assertThat(restored.path("line").asText())
                    .isEqualTo(neverStopped.path("line").asText());
            assertThat(restored.path("usage").path("cachedInputTokens").asInt())
                    .as("only what follows the saved state is read: %s", restored.path("usage"))
                    .isEqualTo(
                            neverStopped.path("usage").path("cachedInputTokens").asInt())
                    .isGreaterThan(reference.path("tokens").asInt() / 2);

            // an edited file: refused with the reason, the turn reads everything and still answers the same
            byte[] bytes = Files.readAllBytes(folder.resolve("gorm.state"));
            bytes[bytes.length / 2] ^= 0x5A;
            Files.write(folder.resolve("gorm.state"), bytes);
            JsonNode refused = c.call(
                    "refused",
                    "npc/restore",
                    "{\"npc\":\"gorm3\",\"state\":" + Json.write(saved.path("state")) + ",\"model\":" + spec + "}");
            assertThat(refused.path("warnings").toString()).contains("SHA-256", "read again");
            JsonNode reread = c.call(5, "npc/talk", third + "\"gorm3\"}");
            assertThat(reread.path("line").asText())
                    .isEqualTo(neverStopped.path("line").asText());

            JsonNode outside = c.call("outside", "npc/state", "{\"npc\":\"gorm\",\"modelState\":\"../gorm.state\"}");
            assertThat(outside.path("warnings").toString()).contains("leads out of the save folder");
            assertThat(outside.path("state").has("modelState")).isFalse();
        } finally {
            backend.close();
        }
    }

    private static void assertLine(JsonNode reply) {
        assertThat(reply.path("line").asText()).as("%s", reply).isNotBlank();
    }
}
