package dev.oam.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.core.json.Json;
import java.util.List;
import java.util.concurrent.ExecutionException;

/**
 * Saved state a game restores from disk: NPC saves ({@code npc/state} → {@code npc/restore}) and world snapshots
 * ({@code world/snapshot} → {@code world/create}). The input is the save. Properties: a save is either restored or
 * refused with a protocol error (never {@code -32603 internal_error}); on what is accepted, decode ∘ encode is the
 * identity: saving the restored thing, restoring that save and saving again gives the same save (apart from the id the
 * copy was given), and a world snapshot equals the state it was created from.
 */
class SavedStateFuzzTest {
    @FuzzTest(maxDuration = "10m")
    void npcRestore(byte[] data) throws Exception {
        JsonNode save = Inputs.json(data);
        if (save == null) {
            return;
        }
        try (BridgeEngine engine = engine()) {
            ObjectNode params = Json.object();
            params.set("state", save);
            params.put("npc", "fuzz");
            params.put("model", "scripted");
            if (call(engine, "npc/restore", params) == null) {
                return;
            }
            JsonNode first = state(engine, "fuzz");
            ObjectNode again = Json.object();
            again.set("state", first);
            again.put("npc", "copy");
            again.put("model", "scripted");
            JsonNode restored = call(engine, "npc/restore", again);
            assertThat(restored)
                    .as("restoring the NPC's own save %s (from %s)", first, save)
                    .isNotNull();
            JsonNode second = state(engine, "copy");
            ObjectNode expected = first.deepCopy();
            expected.put("npc", "copy");
            assertThat(Json.write(second))
                    .as("the save after a round trip of %s", Json.write(save))
                    .isEqualTo(Json.write(expected));
        }
    }

    @FuzzTest(maxDuration = "10m")
    void worldSnapshot(byte[] data) throws Exception {
        JsonNode initial = Inputs.json(data);
        if (initial == null) {
            return;
        }
        try (BridgeEngine engine = engine()) {
            ObjectNode params = Json.object();
            params.put("world", "w");
            params.set("state", initial);
            if (call(engine, "world/create", params) == null) {
                return;
            }
            JsonNode snapshot = call(engine, "world/snapshot", Json.object().put("world", "w"))
                    .get("state");
            assertThat(Json.sameValue(snapshot, initial))
                    .as("the snapshot %s of %s", snapshot, initial)
                    .isTrue();
            ObjectNode copy = Json.object();
            copy.put("world", "w2");
            copy.set("state", Json.parse(Json.write(snapshot)));
            assertThat(call(engine, "world/create", copy))
                    .as("creating a world from the snapshot %s", snapshot)
                    .isNotNull();
            JsonNode second = call(engine, "world/snapshot", Json.object().put("world", "w2"))
                    .get("state");
            assertThat(Json.write(second)).isEqualTo(Json.write(snapshot));
        }
    }

    private static BridgeEngine engine() {
        return new BridgeEngine(
                BridgeConfiguration.builder().backends(List.of()).build(), line -> {});
    }

    private static JsonNode state(BridgeEngine engine, String npc) throws Exception {
        JsonNode result =
                call(engine, "npc/state", Json.object().put("npc", npc).put("settle", false));
        assertThat(result).as("npc/state of %s", npc).isNotNull();
        return result.get("state");
    }

    /** The result, or null when the bridge refused with a protocol error (an internal error fails the target). */
    private static JsonNode call(BridgeEngine engine, String method, ObjectNode params) throws Exception {
        try {
            return engine.call(method, params).get();
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(BridgeException.class);
            BridgeException error = (BridgeException) e.getCause();
            assertThat(error.code())
                    .as("%s %s: %s", method, Json.write(params), error.getMessage())
                    .isNotEqualTo(-32603);
            return null;
        }
    }
}
