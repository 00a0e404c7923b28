package dev.oam.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.game.world.WorldChange;
import dev.oam.game.world.WorldException;
import dev.oam.game.world.WorldPath;
import dev.oam.game.world.WorldState;
import java.util.List;
import java.util.Map;

/**
 * World paths and merge patches (the {@code world/*} methods and the model's world tools take both from the game and
 * from model output). Properties: a path either parses or is refused with {@link WorldException}; the canonical text of
 * a parsed path parses back to the same path; a value written at a path reads back there. A merge patch gives exactly
 * what RFC 7386 says (checked against the few lines of the RFC's own algorithm below), reports a change exactly when
 * the state changed, and applying it again changes nothing.
 */
class WorldFuzzTest {
    private static final String STATE = "{\"party\":[{\"name\":\"Aria\",\"hp\":10},{\"name\":\"Gorm\"}],"
            + "\"gate\":{\"open\":false,\"code\":null},\"stats\":{\"hp.max\":5,\"\":1},\"flags\":[]}";

    @FuzzTest(maxDuration = "10m")
    void paths(byte[] data) throws Exception {
        String text = Inputs.text(data);
        WorldPath path;
        try {
            path = WorldPath.parse(text);
        } catch (WorldException refused) {
            assertThat(refused.getMessage()).isNotBlank();
            return;
        }
        String canonical = path.toString();
        assertThat(WorldPath.parse(canonical))
                .as("the canonical form %s of %s", canonical, text)
                .isEqualTo(path);
        assertThat(WorldPath.parse(canonical).toString()).isEqualTo(canonical);

        WorldState world = WorldState.of(Json.parse(STATE));
        JsonNode value = Json.parse("{\"written\":[1,\"two\"]}");
        try {
            world.set(text, value);
        } catch (WorldException refused) {
            assertThat(refused.getMessage()).isNotBlank();
            return;
        }
        JsonNode back = world.get(canonical);
        assertThat(back)
                .as("read back at %s after writing at %s: %s", canonical, text, world.snapshot())
                .isNotNull();
        assertThat(Json.sameValue(back, value))
                .as("%s read back at %s", back, canonical)
                .isTrue();
    }

    @FuzzTest(maxDuration = "10m")
    void mergePatch(byte[] data) throws Exception {
        JsonNode input = Inputs.json(data);
        if (input == null) {
            return;
        }
        JsonNode state = Json.parse(STATE);
        JsonNode patch = input;
        if (input.isObject() && input.has("patch") && input.path("state").isObject() && input.size() == 2) {
            state = input.get("state");
            patch = input.get("patch");
        }
        WorldState world = WorldState.of(state);
        long version = world.version();
        List<WorldChange> changes;
        try {
            changes = world.merge("", patch);
        } catch (WorldException refused) {
            assertThat(patch.isObject())
                    .as("a merge of the object %s at the root was refused: %s", patch, refused.getMessage())
                    .isFalse();
            assertThat(world.snapshot()).isEqualTo(state);
            return;
        }
        JsonNode expected = rfc7386(state.deepCopy(), patch);
        ObjectNode after = world.snapshot();
        assertThat(Json.sameValue(after, expected))
                .as("merging %s into %s gave %s, RFC 7386 says %s", patch, state, after, expected)
                .isTrue();
        boolean changed = !Json.sameValue(after, state);
        assertThat(!changes.isEmpty())
                .as("changes %s reported for %s → %s", changes, state, after)
                .isEqualTo(changed);
        assertThat(world.version()).isEqualTo(changed ? version + 1 : version);
        for (WorldChange change : changes) {
            JsonNode now = world.get(change.path());
            JsonNode reported = change.newValue();
            assertThat(Json.sameValue(
                            now == null ? NullNode.getInstance() : now,
                            reported == null ? NullNode.getInstance() : reported))
                    .as("the change %s against the state %s", change, after)
                    .isTrue();
        }
        assertThat(world.merge("", patch)).as("merging %s a second time", patch).isEmpty();
        assertThat(world.version()).isEqualTo(changed ? version + 1 : version);
    }

    /** RFC 7386 section 2, MergePatch(Target, Patch), written as the RFC states it. */
    private static JsonNode rfc7386(JsonNode target, JsonNode patch) {
        if (!(patch instanceof ObjectNode patchObject)) {
            return patch;
        }
        ObjectNode result = target instanceof ObjectNode object ? object : Json.object();
        for (Map.Entry<String, JsonNode> member : patchObject.properties()) {
            if (member.getValue().isNull()) {
                result.remove(member.getKey());
            } else {
                JsonNode current = result.get(member.getKey());
                result.set(
                        member.getKey(),
                        rfc7386(current == null ? NullNode.getInstance() : current, member.getValue()));
            }
        }
        return result;
    }
}
