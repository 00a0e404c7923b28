package dev.oam.bridge.game;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.game.world.WorldState;
import dev.oam.game.world.WorldTools;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A world the Java host owns, shared with clients through {@link GameExtension#addWorld}; what the wire cannot reach.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class HostWorldTest {
    private final List<String> lines = new CopyOnWriteArrayList<>();
    /** The game extension of the last {@link #engine()}; before one, a free-standing one. */
    private GameExtension game = new GameExtension();

    private BridgeEngine engine() {
        BridgeEngine engine = new BridgeEngine(BridgeConfiguration.builder().build(), lines::add);
        game = engine.extension(GameExtension.class).orElseThrow();
        return engine;
    }

    private static JsonNode json(String text) throws Exception {
        return Json.parse(text);
    }

    private static JsonNode call(BridgeEngine engine, String method, String params) throws Exception {
        return engine.call(method, params == null ? null : json(params)).get(10, TimeUnit.SECONDS);
    }

    /** Every {@code world/changed} (as "subscription path") and {@code test/marker} line delivered so far. */
    private List<String> delivered() throws Exception {
        List<String> out = new java.util.ArrayList<>();
        for (String line : lines) {
            JsonNode message = Json.parse(line);
            String method = message.path("method").asText();
            if (method.equals(GameExtension.WORLD_CHANGED)) {
                out.add(message.path("params").path("subscription").asText() + " "
                        + message.path("params").path("path").asText());
            } else if (method.equals("test/marker")) {
                out.add("marker");
            }
        }
        return out;
    }

    @Test
    void aHostWorldIsSharedBothWays() throws Exception {
        WorldState world = new WorldState((ObjectNode) json("{\"player\":{\"gold\":60}}"));
        try (BridgeEngine engine = engine()) {
            game.addWorld(world, "main");
            assertThat(call(engine, "world/get", "{\"world\":\"main\",\"path\":\"player.gold\"}")
                            .path("value")
                            .asInt())
                    .isEqualTo(60);
            call(engine, "world/subscribe", "{\"world\":\"main\",\"path\":\"player\"}");
            world.set("player.gold", json("45"));
            call(engine, "ping", null); // answered after everything sent before it
            assertThat(delivered()).containsExactly("sub1 player.gold");
            call(engine, "world/set", "{\"world\":\"main\",\"path\":\"player.name\",\"value\":\"Aria\"}");
            assertThat(world.get("player.name").asText()).isEqualTo("Aria");
            assertThat(world.version()).isEqualTo(2);
            JsonNode listed = call(engine, "world/list", null).path("worlds").get(0);
            assertThat(listed.path("world").asText()).isEqualTo("main");
            assertThat(listed.path("version").asLong()).isEqualTo(2);
        }
    }

    @Test
    void addWorldChecksTheIdAndTheLimit() throws Exception {
        game.addWorld(new WorldState(), "main");
        assertThatThrownBy(() -> game.addWorld(new WorldState(), "main"))
                .isInstanceOf(BridgeException.class)
                .satisfies(e -> assertThat(((BridgeException) e).dataCode()).isEqualTo("world_exists"));
        assertThatThrownBy(() -> game.addWorld(new WorldState(), ""))
                .isInstanceOf(BridgeException.class)
                .satisfies(e -> assertThat(((BridgeException) e).code()).isEqualTo(-32602));
        for (int i = 2; i <= Worlds.MAX_WORLDS; i++) {
            game.addWorld(new WorldState(), "world" + i);
        }
        assertThatThrownBy(() -> game.addWorld(new WorldState(), "one-too-many"))
                .isInstanceOf(BridgeException.class)
                .satisfies(e -> {
                    BridgeException error = (BridgeException) e;
                    assertThat(error.code()).isEqualTo(-32055);
                    assertThat(error.toJson().path("data").path("limit").asInt())
                            .isEqualTo(64);
                });
    }

    @Test
    void aDeletedWorldGoesOnForWhoeverHoldsItButIsNoLongerReachable() throws Exception {
        WorldState world = new WorldState();
        try (BridgeEngine engine = engine()) {
            game.addWorld(world, "main");
            call(engine, "world/subscribe", "{\"world\":\"main\"}");
            assertThat(call(engine, "world/delete", "{\"world\":\"main\"}")
                            .path("endedSubscriptions")
                            .asInt())
                    .isEqualTo(1);
            assertThat(game.worlds.find("main")).isNull();
            world.set("still", json("true"));
            call(engine, "ping", null);
            assertThat(delivered()).isEmpty();
            assertThat(world.get("still").asBoolean()).isTrue();
            game.addWorld(world, "main"); // it can be shared again
            assertThat(game.worlds.find("main")).isSameAs(world);
        }
    }

    @Test
    void changesMadeByWorldToolsOnAnotherThreadAreSentBeforeWhatThatThreadSendsNext() throws Exception {
        WorldState world = new WorldState((ObjectNode) json("{\"player\":{\"gold\":60}}"));
        try (BridgeEngine engine = engine()) {
            game.addWorld(world, "main");
            call(engine, "world/subscribe", "{\"world\":\"main\",\"path\":\"player.gold\"}");
            call(engine, "world/subscribe", "{\"world\":\"main\"}");
            WorldTools tools = new WorldTools(world, List.of(""), List.of("player"));
            Thread turn = Thread.ofVirtual().start(() -> {
                for (int i = 0; i < 20; i++) {
                    tools.execute(new ToolCall(
                            "call_" + i,
                            WorldTools.UPDATE,
                            Json.mapper()
                                    .createObjectNode()
                                    .put("path", "player.gold")
                                    .put("value", String.valueOf(i))));
                    // what a turn sends after its tool ran (its response) must come after the tool's changes
                    engine.sendNotification("test/marker", Json.object());
                }
            });
            turn.join();
            call(engine, "ping", null);
            List<String> expected = new java.util.ArrayList<>();
            for (int i = 0; i < 20; i++) {
                expected.addAll(List.of("sub1 player.gold", "sub2 player.gold", "marker"));
            }
            assertThat(delivered()).isEqualTo(expected);
            assertThat(world.version()).isEqualTo(20);
        }
    }

    @Test
    void shutdownForgetsWorldsAndEndsSubscriptions() throws Exception {
        WorldState world = new WorldState();
        BridgeEngine engine = engine();
        game.addWorld(world, "main");
        call(engine, "world/subscribe", "{\"world\":\"main\"}");
        engine.close();
        assertThat(game.worlds.find("main")).isNull();
        assertThat(game.worlds.entries()).isEmpty();
        world.set("after", json("1"));
        assertThat(delivered()).isEmpty();
    }

    @Test
    void worldErrorsBecomeWorldErrorResponses() throws Exception {
        try (BridgeEngine engine = engine()) {
            call(engine, "world/create", "{\"world\":\"w\",\"state\":{\"a\":1}}");
            assertThatThrownBy(() -> call(engine, "world/set", "{\"world\":\"w\",\"path\":\"a.b\",\"value\":1}"))
                    .cause()
                    .isInstanceOf(BridgeException.class)
                    .satisfies(e -> {
                        JsonNode error = ((BridgeException) e).toJson();
                        assertThat(error.path("code").asInt()).isEqualTo(-32054);
                        assertThat(error.path("data").path("world").asText()).isEqualTo("w");
                        assertThat(error.path("data").path("path").asText()).isEqualTo("a.b");
                        assertThat(error.path("message").asText())
                                .isEqualTo("Cannot write 'a.b': 'a' is a number, not an object or a list.");
                    });
        }
    }

    @Test
    void twoEnginesBuiltFromOneConfigurationHaveTheirOwnGameState() throws Exception {
        List<String> otherLines = new CopyOnWriteArrayList<>();
        BridgeConfiguration configuration = BridgeConfiguration.builder().build();
        try (BridgeEngine first = new BridgeEngine(configuration, lines::add)) {
            BridgeEngine second = new BridgeEngine(configuration, otherLines::add);
            assertThat(first.extension(GameExtension.class).orElseThrow())
                    .isNotSameAs(second.extension(GameExtension.class).orElseThrow());
            call(first, "world/create", "{\"world\":\"w\",\"state\":{\"a\":1}}");
            call(
                    first,
                    "npc/create",
                    "{\"npc\":\"bram\",\"persona\":{\"name\":\"Bram\"},\"model\":"
                            + "{\"type\":\"scripted\",\"steps\":[{\"text\":\"hi\"}]}}");
            assertThat(call(second, "world/list", null).path("worlds")).isEmpty();
            assertThat(call(second, "npc/list", null).path("npcs")).isEmpty();
            call(second, "world/create", "{\"world\":\"w\",\"state\":{\"b\":2}}"); // the same id: no conflict
            second.close(); // shuts down the second engine's extensions only
            assertThat(call(first, "world/get", "{\"world\":\"w\",\"path\":\"a\"}")
                            .path("value")
                            .asInt())
                    .isEqualTo(1);
            assertThat(call(first, "npc/list", null).path("npcs")).hasSize(1);
        }
    }
}
