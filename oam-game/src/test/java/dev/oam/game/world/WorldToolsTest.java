package dev.oam.game.world;

import static dev.oam.game.world.WorldStateTest.json;
import static dev.oam.game.world.WorldStateTest.world;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolReply;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class WorldToolsTest {
    private static final String VILLAGE = """
            {"player":{"name":"Aria","gold":60,"alive":true,"bag":["rope","torch"],"title":null},
             "quests":{"lost_ring":{"status":"open","reward":100}},
             "secrets":{"king":"is a fraud"},"time_of_day":"night"}""";

    private static ToolReply call(WorldTools tools, String name, String argumentsJson) {
        return tools.execute(new ToolCall("call_1", name, (ObjectNode) json(argumentsJson)));
    }

    private static ToolReply read(WorldTools tools, String path) {
        return call(
                tools, WorldTools.READ, "{\"path\":" + Json.write(Json.mapper().valueToTree(path)) + "}");
    }

    private static ToolReply update(WorldTools tools, String path, String value) {
        return call(
                tools,
                WorldTools.UPDATE,
                "{\"path\":" + Json.write(Json.mapper().valueToTree(path)) + ",\"value\":"
                        + Json.write(Json.mapper().valueToTree(value)) + "}");
    }

    private static String error(ToolReply reply) {
        assertThat(reply.isError())
                .as("expected an error but got %s", reply.output())
                .isTrue();
        return reply.output().asText();
    }

    private static JsonNode ok(ToolReply reply) {
        assertThat(reply.isError())
                .as("expected a value but got %s", reply.output())
                .isFalse();
        return reply.output();
    }

    // ---------------------------------------------------------------- definitions

    @Test
    void toolsAreOfferedOnlyForNonEmptyPathLists() {
        WorldState world = world(VILLAGE);
        assertThat(new WorldTools(world, List.of(""), List.of()).definitions())
                .extracting(ToolDefinition::name)
                .containsExactly(WorldTools.READ);
        assertThat(new WorldTools(world, List.of(), List.of("quests")).definitions())
                .extracting(ToolDefinition::name)
                .containsExactly(WorldTools.UPDATE);
        assertThat(new WorldTools(world, List.of("player"), List.of("quests")).definitions())
                .extracting(ToolDefinition::name)
                .containsExactly(WorldTools.READ, WorldTools.UPDATE);
        assertThat(new WorldTools(world, List.of(), List.of()).definitions()).isEmpty();
        WorldTools none = new WorldTools(world, List.of(), List.of());
        assertThat(none.handles(WorldTools.READ)).isTrue();
        assertThat(none.handles("open_gate")).isFalse();
        assertThat(error(read(none, "player"))).contains("not allowed");
        assertThat(error(update(none, "player.gold", "1"))).contains("not allowed");
        assertThat(error(call(none, "open_gate", "{}"))).contains("not a world tool");
    }

    @Test
    void theReadToolListsUpToTwelveTopLevelKeysOrTheReadablePaths() {
        WorldState world = new WorldState();
        for (int i = 1; i <= 14; i++) {
            try {
                world.set("k" + i, json(String.valueOf(i)));
            } catch (WorldException e) {
                throw new IllegalStateException(e);
            }
        }
        String everything = new WorldTools(world, List.of(""), List.of())
                .definitions()
                .getFirst()
                .description();
        assertThat(everything)
                .contains("Top-level keys: k1, k2, k3, k4, k5, k6, k7, k8, k9, k10, k11, k12.")
                .doesNotContain("k13");
        String some = new WorldTools(world, List.of("player", "quests.lost_ring"), List.of())
                .definitions()
                .getFirst()
                .description();
        assertThat(some).contains("Readable paths: player, quests.lost_ring.").doesNotContain("k1");
        ToolDefinition updateTool = new WorldTools(world, List.of(), List.of("quests", "player.gold"))
                .definitions()
                .getFirst();
        assertThat(updateTool.description()).contains("You may change: quests, player.gold.");
        assertThat(updateTool.parameters().path("properties").has("path")).isTrue();
        assertThat(updateTool
                        .parameters()
                        .path("properties")
                        .path("value")
                        .path("type")
                        .asText())
                .isEqualTo("string");
        assertThat(updateTool.parameters().path("required").toString()).isEqualTo("[\"path\",\"value\"]");
    }

    // ---------------------------------------------------------------- read

    @Test
    void readsWithinReadablePrefixesMatchingKeysIgnoringCase() {
        WorldTools tools = new WorldTools(world(VILLAGE), List.of(""), List.of());
        assertThat(ok(read(tools, "player.gold"))).isEqualTo(json("60"));
        assertThat(ok(read(tools, "Player.GOLD"))).isEqualTo(json("60"));
        assertThat(ok(read(tools, "player.bag[1]"))).isEqualTo(json("\"torch\""));
        assertThat(ok(read(tools, "quests/lost_ring"))).isEqualTo(json("{\"status\":\"open\",\"reward\":100}"));
        assertThat(ok(read(tools, ""))).isEqualTo(json(VILLAGE));
        assertThat(ok(call(tools, WorldTools.READ, "{}"))).isEqualTo(json(VILLAGE));
        assertThat(read(tools, "player.name").modelText()).isEqualTo("Aria");
        assertThat(error(read(tools, "player..gold"))).contains("'player..gold' is not a valid path");
    }

    @Test
    void pathsOutsideTheReadablePrefixesAreRefusedNamingThem() {
        WorldTools tools = new WorldTools(world(VILLAGE), List.of("player", "quests.lost_ring.status"), List.of());
        assertThat(error(read(tools, "secrets.king")))
                .isEqualTo("You cannot read 'secrets.king'. Readable paths: player, quests.lost_ring.status.");
        assertThat(error(read(tools, "quests.lost_ring.reward")))
                .startsWith("You cannot read 'quests.lost_ring.reward'.");
        assertThat(ok(read(tools, "PLAYER.name"))).isEqualTo(json("\"Aria\""));
    }

    @Test
    void anAncestorOfReadablePrefixesShowsOnlyTheReadableSubtrees() {
        WorldTools tools = new WorldTools(
                world(VILLAGE), List.of("player.gold", "quests.lost_ring.status", "player.nothing"), List.of());
        assertThat(ok(read(tools, "")))
                .isEqualTo(json("{\"player\":{\"gold\":60},\"quests\":{\"lost_ring\":{\"status\":\"open\"}}}"));
        assertThat(ok(read(tools, "quests"))).isEqualTo(json("{\"lost_ring\":{\"status\":\"open\"}}"));
        assertThat(ok(read(tools, "Player"))).isEqualTo(json("{\"gold\":60}"));
    }

    @Test
    void missingPathsNameWhatTheNearestExistingAncestorHolds() {
        WorldTools tools = new WorldTools(world(VILLAGE), List.of(""), List.of());
        assertThat(error(read(tools, "player.gld")))
                .isEqualTo("No value at 'player.gld'. 'player' has keys: name, gold, alive, bag, title.");
        assertThat(error(read(tools, "dragons.red.age")))
                .isEqualTo(
                        "No value at 'dragons.red.age'. The game state has keys: player, quests, secrets, time_of_day.");
        assertThat(error(read(tools, "player.bag.5")))
                .isEqualTo("No value at 'player.bag.5'. 'player.bag' is a list of 2 items (indexes 0 to 1).");
        assertThat(error(read(tools, "player.gold.coins")))
                .isEqualTo("No value at 'player.gold.coins'. 'player.gold' is a number: 60.");
        assertThat(error(read(tools, "time_of_day.hour")))
                .isEqualTo("No value at 'time_of_day.hour'. 'time_of_day' is a string: \"night\".");
        assertThat(error(read(tools, "player.title.x")))
                .isEqualTo("No value at 'player.title.x'. 'player.title' is null.");
    }

    @Test
    void missingPathErrorsListAtMostTwentyKeysAndNeverUnreadableOnes() throws Exception {
        WorldState world = new WorldState();
        for (int i = 1; i <= 25; i++) {
            world.set("town.house" + i, json("1"));
        }
        world.set("hidden.treasure", json("1"));
        String many = error(read(new WorldTools(world, List.of(""), List.of()), "town.castle"));
        assertThat(many).contains("house20 (and 5 more).").doesNotContain("house21");
        String restricted = error(read(new WorldTools(world, List.of("player"), List.of()), "player.gold"));
        assertThat(restricted).isEqualTo("No value at 'player.gold'. Readable paths: player.");
    }

    @Test
    void largeObjectsBecomeAKeyPreviewWithANote() throws Exception {
        WorldState world = new WorldState();
        world.set("town.story", json("\"" + "long tale ".repeat(30) + "\""));
        world.set(
                "town.houses",
                Json.mapper().valueToTree(java.util.Collections.nCopies(100, "a house with a red roof")));
        world.set("town.mayor", json("{\"name\":\"Bran\",\"age\":50}"));
        world.set("town.population", json("1200"));
        JsonNode preview = ok(read(new WorldTools(world, List.of(""), List.of()), "town"));
        assertThat(preview.path("story").asText()).hasSize(80).endsWith("...");
        assertThat(preview.path("houses").asText()).isEqualTo("[list of 100 items]");
        assertThat(preview.path("mayor").asText()).isEqualTo("{object with 2 keys}");
        assertThat(preview.path("population").asInt()).isEqualTo(1200);
        assertThat(preview.path("_note").asText())
                .contains("Read a narrower path")
                .contains("'town.story'");
        assertThat(Json.write(preview).length()).isLessThanOrEqualTo(WorldTools.OUTPUT_LIMIT);
    }

    @Test
    void largeListsKeepTheItemsThatFitWithACount() throws Exception {
        WorldState world = new WorldState();
        List<String> houses = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            houses.add("house number " + i);
        }
        world.set("houses", Json.mapper().valueToTree(houses));
        JsonNode shortened = ok(read(new WorldTools(world, List.of(""), List.of()), "houses"));
        int kept = shortened.path("items").size();
        assertThat(kept).isBetween(10, 199);
        assertThat(shortened.path("items").get(0).asText()).isEqualTo("house number 0");
        assertThat(shortened.path("_note").asText()).startsWith("Showing " + kept + " of 200 items.");
        assertThat(Json.write(shortened).length()).isLessThanOrEqualTo(WorldTools.OUTPUT_LIMIT);
        world.set("", json("{\"wide\":{}}"));
        for (int i = 0; i < 300; i++) {
            world.set("wide.key" + i, json(String.valueOf(i)));
        }
        JsonNode wide = ok(read(new WorldTools(world, List.of(""), List.of()), "wide"));
        assertThat(Json.write(wide).length()).isLessThanOrEqualTo(WorldTools.OUTPUT_LIMIT);
        assertThat(wide.path("_note").asText()).contains("of 300 keys.");
    }

    // ---------------------------------------------------------------- update

    @Test
    void updatesKeepTheStoredType() throws Exception {
        WorldState world = world(VILLAGE);
        WorldTools tools = new WorldTools(world, List.of(""), List.of("player", "quests"));
        assertThat(ok(update(tools, "player.gold", "1,045")).asText()).isEqualTo("Set player.gold to 1045 (was 60).");
        assertThat(world.get("player.gold")).isEqualTo(json("1045"));
        assertThat(ok(update(tools, "player.gold", " 12.50 ")).asText())
                .isEqualTo("Set player.gold to 12.5 (was 1045).");
        assertThat(error(update(tools, "player.gold", "lots")))
                .isEqualTo("Cannot set 'player.gold': it holds a number (12.5); 'lots' is not a number.");
        assertThat(ok(update(tools, "player.alive", "No")).asText()).isEqualTo("Set player.alive to false (was true).");
        assertThat(ok(update(tools, "player.alive", "1")).asText()).isEqualTo("Set player.alive to true (was false).");
        assertThat(error(update(tools, "player.alive", "maybe")))
                .isEqualTo("Cannot set 'player.alive': it holds true or false; 'maybe' is neither.");
        assertThat(ok(update(tools, "player.name", "\"Aria the Bold\"")).asText())
                .isEqualTo("Set player.name to \"Aria the Bold\" (was \"Aria\").");
        assertThat(ok(update(tools, "player.name", "42")).asText())
                .isEqualTo("Set player.name to \"42\" (was \"Aria the Bold\").");
        assertThat(ok(update(tools, "player.bag", "[\"rope\"]")).asText())
                .isEqualTo("Set player.bag to [\"rope\"] (was [\"rope\",\"torch\"]).");
        assertThat(error(update(tools, "player.bag", "sword"))).startsWith("Cannot set 'player.bag': it holds a list;");
        assertThat(error(update(tools, "quests.lost_ring", "[1]")))
                .startsWith("Cannot set 'quests.lost_ring': it holds an object;");
        assertThat(world.get("player"))
                .isEqualTo(json("{\"name\":\"42\",\"gold\":12.5,\"alive\":true,\"bag\":[\"rope\"],\"title\":null}"));
    }

    @Test
    void newPathsAndNullsTakeAJsonLiteralOrTheText() throws Exception {
        WorldState world = world(VILLAGE);
        WorldTools tools = new WorldTools(world, List.of(""), List.of(""));
        assertThat(ok(update(tools, "quests.dragon.status", "started")).asText())
                .isEqualTo("Set quests.dragon.status to \"started\".");
        assertThat(ok(update(tools, "quests.dragon.reward", "500")).asText())
                .isEqualTo("Set quests.dragon.reward to 500.");
        assertThat(ok(update(tools, "player.title", "{\"name\":\"Knight\"}")).asText())
                .isEqualTo("Set player.title to {\"name\":\"Knight\"} (was null).");
        assertThat(ok(update(tools, "flags.seen", "true")).asText()).isEqualTo("Set flags.seen to true.");
        assertThat(world.get("quests.dragon")).isEqualTo(json("{\"status\":\"started\",\"reward\":500}"));
    }

    @Test
    void valuesSentAsJsonKeepTheirTypeWhenItFits() throws Exception {
        WorldState world = world(VILLAGE);
        WorldTools tools = new WorldTools(world, List.of(""), List.of("player"));
        assertThat(ok(call(tools, WorldTools.UPDATE, "{\"path\":\"player.gold\",\"value\":45}"))
                        .asText())
                .isEqualTo("Set player.gold to 45 (was 60).");
        assertThat(ok(call(tools, WorldTools.UPDATE, "{\"path\":\"player.name\",\"value\":7}"))
                        .asText())
                .isEqualTo("Set player.name to \"7\" (was \"Aria\").");
        assertThat(ok(call(tools, WorldTools.UPDATE, "{\"path\":\"player.alive\",\"value\":0}"))
                        .asText())
                .isEqualTo("Set player.alive to false (was true).");
        assertThat(error(call(tools, WorldTools.UPDATE, "{\"path\":\"player.gold\"}")))
                .contains("'value'");
        assertThat(error(call(tools, WorldTools.UPDATE, "{\"value\":\"1\"}"))).contains("'path'");
    }

    @Test
    void writesOutsideTheWritablePrefixesAreReadOnly() throws Exception {
        WorldState world = world(VILLAGE);
        WorldTools tools = new WorldTools(world, List.of(""), List.of("quests", "player.gold"));
        assertThat(error(update(tools, "player.name", "Bob")))
                .isEqualTo("'player.name' is read-only. You may change: quests, player.gold.");
        assertThat(error(update(tools, "player", "{}"))).startsWith("'player' is read-only.");
        assertThat(ok(update(tools, "QUESTS.Lost_Ring.STATUS", "done")).asText())
                .isEqualTo("Set quests.lost_ring.status to \"done\" (was \"open\").");
        assertThat(error(update(tools, "player.gold.x", "1")))
                .isEqualTo("Cannot write 'player.gold.x': 'player.gold' is a number, not an object or a list.");
        assertThat(error(update(tools, "quests..x", "1"))).contains("is not a valid path");
        assertThat(world.version()).isEqualTo(1);
    }

    @Test
    void updatesNotifyListenersAndAnUnchangedValueDoesNot() throws Exception {
        WorldState world = world(VILLAGE);
        WorldStateTest.Recorder recorder = new WorldStateTest.Recorder();
        world.addListener(recorder);
        WorldTools tools = new WorldTools(world, List.of(), List.of("player"));
        ok(update(tools, "player.gold", "45"));
        ok(update(tools, "player.gold", "45.0"));
        assertThat(recorder.lines).containsExactly("player.gold: 60 -> 45");
        assertThat(world.version()).isEqualTo(1);
    }
}
