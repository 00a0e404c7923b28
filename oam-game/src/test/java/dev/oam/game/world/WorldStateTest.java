package dev.oam.game.world;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WorldStateTest {
    static JsonNode json(String text) {
        try {
            return Json.parse(text);
        } catch (Exception e) {
            throw new IllegalArgumentException(e);
        }
    }

    static WorldState world(String text) {
        return new WorldState((ObjectNode) json(text));
    }

    /** A listener that records "path: old -> new" lines (absent as "-"). */
    static final class Recorder implements WorldListener {
        final List<String> lines = new ArrayList<>();

        @Override
        public void changed(WorldState world, WorldChange change) {
            lines.add(describe(change));
        }
    }

    static String describe(WorldChange change) {
        return change.path() + ": " + (change.oldValue() == null ? "-" : Json.write(change.oldValue())) + " -> "
                + (change.newValue() == null ? "-" : Json.write(change.newValue()));
    }

    static List<String> describe(List<WorldChange> changes) {
        return changes.stream().map(WorldStateTest::describe).toList();
    }

    // ---------------------------------------------------------------- paths

    @Test
    void everyPathFormReachesTheSameValue() throws Exception {
        WorldState world = world("{\"party\":[{\"name\":\"Aria\"}],\"player\":{\"gold\":12}}");
        for (String path : List.of(
                "party.0.name",
                "party[0].name",
                "party/0/name",
                "$.party.0.name",
                "/party/0/name",
                "$.party[0].name",
                " party.0.name ")) {
            assertThat(world.get(path)).as(path).isEqualTo(json("\"Aria\""));
        }
        for (String root : List.of("", "$", "/", ".", "  ")) {
            assertThat(world.get(root)).as("'%s'", root).isEqualTo(world.snapshot());
        }
        assertThat(WorldPath.parse("a[0][1].b").segments()).containsExactly("a", "0", "1", "b");
        assertThat(WorldPath.parse("[2].x").segments()).containsExactly("2", "x");
        assertThat(WorldPath.parse("a['b c']").segments()).containsExactly("a", "b c");
        assertThat(WorldPath.parse("$[0]").toString()).isEqualTo("0");
    }

    @Test
    void quotedSegmentsAddressKeysWithDotsSlashesAndBrackets() throws Exception {
        WorldState world = world("{\"stats\":{\"hp.max\":30,\"a/b\":1,\"x[0]\":2,\"\":3,\" pad \":4,\"q\\\"\":5},"
                + "\"$\":{\"k\":6},\"hp\":{\"max\":99}}");
        assertThat(world.get("stats[\"hp.max\"]")).isEqualTo(json("30"));
        assertThat(world.get("stats['hp.max']")).isEqualTo(json("30"));
        assertThat(world.get("stats[ \"hp.max\" ]")).isEqualTo(json("30"));
        assertThat(world.get("stats[\"a/b\"]")).isEqualTo(json("1"));
        assertThat(world.get("stats[\"x[0]\"]")).isEqualTo(json("2"));
        assertThat(world.get("stats[\"\"]")).isEqualTo(json("3"));
        assertThat(world.get("stats[\" pad \"]")).isEqualTo(json("4"));
        assertThat(world.get("stats[\"q\\\"\"]")).isEqualTo(json("5"));
        assertThat(world.get("stats['q\"']")).isEqualTo(json("5"));
        assertThat(world.get("[\"$\"].k")).isEqualTo(json("6"));
        assertThat(world.get("stats[\"hp\\u002emax\"]")).isEqualTo(json("30"));
        // The old forms mean what they meant.
        assertThat(world.get("hp.max")).isEqualTo(json("99"));
        assertThat(world.get("hp['max']")).isEqualTo(json("99"));
        // The canonical form quotes exactly the keys a dot path cannot hold, and parses back to the same path.
        for (List<String> segments : List.of(
                List.of("stats", "hp.max"),
                List.of("a/b", "c"),
                List.of("x[0]"),
                List.of("", "y"),
                List.of(" pad "),
                List.of("q\"", "'"),
                List.of("$"),
                List.of("a", "$"),
                List.of("party", "0", "name"))) {
            WorldPath path = new WorldPath(segments);
            assertThat(WorldPath.parse(path.toString())).as(path.toString()).isEqualTo(path);
        }
        assertThat(new WorldPath(List.of("stats", "hp.max", "x")).toString()).isEqualTo("stats[\"hp.max\"].x");
        assertThat(new WorldPath(List.of("$", "k")).toString()).isEqualTo("[\"$\"].k");
        assertThat(new WorldPath(List.of("party", "0", "name")).toString()).isEqualTo("party.0.name");
        // Changes carry the canonical path, so a listener can address what changed.
        Recorder recorder = new Recorder();
        world.addListener(recorder);
        world.set("stats[\"hp.max\"]", json("31"));
        assertThat(recorder.lines).containsExactly("stats[\"hp.max\"]: 30 -> 31");
        assertThat(world.summary(List.of("stats"), 30)).startsWith("stats[\"hp.max\"]: 31\n");
    }

    @Test
    void malformedPathsAreRejectedNamingThePath() {
        WorldState world = new WorldState();
        for (String bad : List.of(
                "a..b",
                ".a",
                "a.",
                "a[0",
                "a]",
                "a[]",
                "a[0]b",
                "a.[0]",
                "$..a",
                "a//b",
                "a[\"b]",
                "a[\"b\"c]",
                "a[\"\\q\"]",
                "a['b'c]",
                "a[\"\\u12\"]")) {
            assertThatThrownBy(() -> world.get(bad))
                    .as(bad)
                    .isInstanceOf(WorldException.class)
                    .hasMessageContaining("'" + bad + "' is not a valid path")
                    .satisfies(e -> assertThat(((WorldException) e).path()).isEqualTo(bad));
            assertThatThrownBy(() -> world.set(bad, json("1"))).as(bad).isInstanceOf(WorldException.class);
        }
        assertThat(world.version()).isZero();
    }

    // ---------------------------------------------------------------- get and snapshot

    @Test
    void getReturnsDeepCopiesAndNullWhenAbsent() throws Exception {
        WorldState world = world("{\"player\":{\"gold\":12,\"bag\":[\"rope\"]},\"flag\":null}");
        JsonNode player = world.get("player");
        ((ObjectNode) player).put("gold", 999);
        assertThat(world.get("player.gold")).isEqualTo(json("12"));
        ObjectNode snapshot = world.snapshot();
        snapshot.removeAll();
        assertThat(world.get("player.bag.0")).isEqualTo(json("\"rope\""));
        assertThat(world.get("player.bag.1")).isNull();
        assertThat(world.get("player.gold.x")).isNull();
        assertThat(world.get("nothing.here")).isNull();
        assertThat(world.get("flag")).isEqualTo(NullNode.getInstance());
    }

    @Test
    void theInitialObjectIsCopied() throws Exception {
        ObjectNode initial = (ObjectNode) json("{\"a\":1}");
        WorldState world = new WorldState(initial);
        initial.put("a", 2);
        assertThat(world.get("a")).isEqualTo(json("1"));
        assertThatThrownBy(() -> WorldState.of(json("[1]")))
                .isInstanceOf(WorldException.class)
                .hasMessageContaining("must be a JSON object, not a list");
        assertThat(WorldState.of(json("{\"b\":true}")).get("b")).isEqualTo(json("true"));
    }

    // ---------------------------------------------------------------- set

    @Test
    void setCreatesMissingObjectsOnTheWay() throws Exception {
        WorldState world = new WorldState();
        Recorder recorder = new Recorder();
        world.addListener(recorder);
        List<WorldChange> changes = world.set("quests.lost_ring.status", json("\"open\""));
        assertThat(describe(changes)).containsExactly("quests.lost_ring.status: - -> \"open\"");
        assertThat(recorder.lines).containsExactly("quests.lost_ring.status: - -> \"open\"");
        assertThat(world.snapshot()).isEqualTo(json("{\"quests\":{\"lost_ring\":{\"status\":\"open\"}}}"));
        assertThat(world.version()).isEqualTo(1);
        world.set("flag", NullNode.getInstance());
        world.set("flag.inner", json("1")); // a null on the way counts as missing
        assertThat(world.get("flag")).isEqualTo(json("{\"inner\":1}"));
    }

    @Test
    void indexNOfAnNElementListAppends() throws Exception {
        WorldState world = world("{\"party\":[\"Aria\",\"Bran\"]}");
        assertThat(describe(world.set("party.2", json("\"Cora\"")))).containsExactly("party.2: - -> \"Cora\"");
        assertThat(describe(world.set("party[0]", json("\"Ada\"")))).containsExactly("party.0: \"Aria\" -> \"Ada\"");
        world.set("party.3.name", json("\"Dain\""));
        assertThat(world.get("party")).isEqualTo(json("[\"Ada\",\"Bran\",\"Cora\",{\"name\":\"Dain\"}]"));
        assertThatThrownBy(() -> world.set("party.5", json("1")))
                .isInstanceOf(WorldException.class)
                .hasMessage("'party' is a list of 4 items; '5' is not a valid index (use 0 to 4, where 4 appends).");
        assertThatThrownBy(() -> world.set("party.first", json("1")))
                .isInstanceOf(WorldException.class)
                .hasMessageContaining("'first' is not a valid index");
        assertThat(world.version()).isEqualTo(3);
    }

    @Test
    void writingThroughAScalarFailsAndChangesNothing() throws Exception {
        WorldState world = world("{\"player\":{\"gold\":12}}");
        assertThatThrownBy(() -> world.set("player.gold.coins", json("1")))
                .isInstanceOf(WorldException.class)
                .hasMessage("Cannot write 'player.gold.coins': 'player.gold' is a number, not an object or a list.")
                .satisfies(e -> assertThat(((WorldException) e).path()).isEqualTo("player.gold.coins"));
        assertThatThrownBy(() -> world.set("player/gold[0]", json("1")))
                .isInstanceOf(WorldException.class)
                .satisfies(e -> assertThat(((WorldException) e).path()).isEqualTo("player/gold[0]"));
        assertThat(world.snapshot()).isEqualTo(json("{\"player\":{\"gold\":12}}"));
        assertThat(world.version()).isZero();
    }

    @Test
    void theRootMustStayAnObject() throws Exception {
        WorldState world = world("{\"a\":1}");
        assertThatThrownBy(() -> world.set("", json("[1,2]")))
                .isInstanceOf(WorldException.class)
                .hasMessage("The world state root must be a JSON object, not a list.");
        assertThatThrownBy(() -> world.set("$", NullNode.getInstance()))
                .isInstanceOf(WorldException.class)
                .hasMessageContaining("not null");
        assertThatThrownBy(() -> world.merge("", json("5"))).isInstanceOf(WorldException.class);
        assertThat(describe(world.set("", json("{\"b\":2}")))).containsExactly(": {\"a\":1} -> {\"b\":2}");
        assertThat(world.snapshot()).isEqualTo(json("{\"b\":2}"));
        assertThat(world.version()).isEqualTo(1);
    }

    @Test
    void jsonNullIsStoredAsAValue() throws Exception {
        WorldState world = world("{\"a\":1}");
        assertThat(describe(world.set("a", NullNode.getInstance()))).containsExactly("a: 1 -> null");
        assertThat(world.get("a")).isEqualTo(NullNode.getInstance());
        assertThat(describe(world.set("b", null))).containsExactly("b: - -> null");
        assertThat(world.snapshot()).isEqualTo(json("{\"a\":null,\"b\":null}"));
    }

    @Test
    void unchangedWritesNeitherNotifyNorBumpTheVersion() throws Exception {
        WorldState world = world("{\"gold\":12,\"player\":{\"name\":\"Aria\",\"tags\":[1,2]},\"n\":null}");
        Recorder recorder = new Recorder();
        world.addListener(recorder);
        assertThat(world.set("gold", json("12"))).isEmpty();
        assertThat(world.set("gold", json("12.0"))).isEmpty();
        assertThat(world.set("player", json("{\"tags\":[1,2],\"name\":\"Aria\"}")))
                .isEmpty();
        assertThat(world.set("n", NullNode.getInstance())).isEmpty();
        assertThat(world.set("", json("{\"n\":null,\"gold\":12,\"player\":{\"name\":\"Aria\",\"tags\":[1,2]}}")))
                .isEmpty();
        assertThat(world.merge("player", json("{\"name\":\"Aria\",\"gone\":null}")))
                .isEmpty();
        assertThat(world.merge("", json("{}"))).isEmpty();
        assertThat(world.remove("player.nothing")).isNull();
        assertThat(world.remove("gold.inside")).isNull();
        assertThat(recorder.lines).isEmpty();
        assertThat(world.version()).isZero();
        world.set("gold", json("13"));
        assertThat(world.version()).isEqualTo(1);
        assertThat(recorder.lines).containsExactly("gold: 12 -> 13");
    }

    @Test
    void storedValuesAreCopiesOfWhatWasPassed() throws Exception {
        WorldState world = new WorldState();
        ObjectNode value = (ObjectNode) json("{\"hp\":10}");
        List<WorldChange> changes = world.set("boss", value);
        value.put("hp", 0);
        ((ObjectNode) changes.getFirst().newValue()).put("hp", -1);
        assertThat(world.get("boss.hp")).isEqualTo(json("10"));
    }

    // ---------------------------------------------------------------- merge

    @Test
    void mergeReportsOneChangePerChangedLeafInPatchOrder() throws Exception {
        WorldState world =
                world("{\"player\":{\"name\":\"Aria\",\"gold\":60,\"mood\":\"calm\",\"bag\":[1]},\"time\":\"day\"}");
        Recorder recorder = new Recorder();
        world.addListener(recorder);
        List<WorldChange> changes = world.merge("", json("""
                {"player":{"gold":45,"name":"Aria","mood":null,"bag":[1,2],"title":"Knight"},"time":"night","ghost":null,
                 "quests":{"ring":{"status":"open","giver":null}}}"""));
        assertThat(describe(changes))
                .containsExactly(
                        "player.gold: 60 -> 45",
                        "player.mood: \"calm\" -> -",
                        "player.bag: [1] -> [1,2]",
                        "player.title: - -> \"Knight\"",
                        "time: \"day\" -> \"night\"",
                        "quests: - -> {\"ring\":{\"status\":\"open\"}}");
        assertThat(recorder.lines).isEqualTo(describe(changes));
        assertThat(world.version()).isEqualTo(1);
        assertThat(world.snapshot()).isEqualTo(json("""
                {"player":{"name":"Aria","gold":45,"bag":[1,2],"title":"Knight"},"time":"night",
                 "quests":{"ring":{"status":"open"}}}"""));
    }

    @Test
    void mergeAtAPathCreatesItAndReplacesNonObjects() throws Exception {
        WorldState world = world("{\"npcs\":{\"gorm\":\"asleep\"}}");
        assertThat(describe(world.merge("npcs.gorm", json("{\"mood\":\"grumpy\",\"x\":null}"))))
                .containsExactly("npcs.gorm: \"asleep\" -> {\"mood\":\"grumpy\"}");
        assertThat(describe(world.merge("npcs.bran.stats", json("{\"hp\":3}"))))
                .containsExactly("npcs.bran.stats: - -> {\"hp\":3}");
        assertThat(describe(world.merge("npcs.gorm.mood", json("\"happy\""))))
                .containsExactly("npcs.gorm.mood: \"grumpy\" -> \"happy\"");
        assertThat(describe(world.merge("npcs.gorm.mood", NullNode.getInstance())))
                .containsExactly("npcs.gorm.mood: \"happy\" -> null");
        assertThatThrownBy(() -> world.merge("npcs.bran.stats.hp.x", json("{\"a\":1}")))
                .isInstanceOf(WorldException.class)
                .hasMessageContaining("'npcs.bran.stats.hp' is a number");
        assertThat(world.version()).isEqualTo(4);
        assertThat(world.merge("npcs.bran", json("{\"stats\":{\"hp\":3}}"))).isEmpty();
        assertThat(world.version()).isEqualTo(4);
        assertThat(describe(
                        world.merge("npcs.gorm.mood.deeper", json("{\"a\":1}")))) // a null on the way counts as missing
                .containsExactly("npcs.gorm.mood.deeper: - -> {\"a\":1}");
    }

    // ---------------------------------------------------------------- remove

    @Test
    void removeReturnsTheOldValueAndShiftsLists() throws Exception {
        WorldState world = world("{\"party\":[\"Aria\",\"Bran\",\"Cora\"],\"player\":{\"gold\":12}}");
        Recorder recorder = new Recorder();
        world.addListener(recorder);
        assertThat(world.remove("party[0]")).isEqualTo(json("\"Aria\""));
        assertThat(world.get("party")).isEqualTo(json("[\"Bran\",\"Cora\"]"));
        assertThat(world.remove("player.gold")).isEqualTo(json("12"));
        assertThat(world.remove("player.gold")).isNull();
        assertThat(world.remove("party.9")).isNull();
        assertThat(world.remove("party.1")).isEqualTo(json("\"Cora\""));
        // Removing the first item moved every later one: the change is the whole list, which reaches the
        // listeners of each index; removing the last item moved nothing, so only that index changed.
        assertThat(recorder.lines)
                .containsExactly(
                        "party: [\"Aria\",\"Bran\",\"Cora\"] -> [\"Bran\",\"Cora\"]",
                        "player.gold: 12 -> -",
                        "party.1: \"Cora\" -> -");
        assertThat(world.version()).isEqualTo(3);
        assertThatThrownBy(() -> world.remove("a..b")).isInstanceOf(WorldException.class);
    }

    @Test
    void removingTheRootEmptiesTheWorld() throws Exception {
        WorldState world = world("{\"a\":1}");
        Recorder recorder = new Recorder();
        world.addListener(recorder);
        assertThat(world.remove("")).isEqualTo(json("{\"a\":1}"));
        assertThat(world.snapshot()).isEqualTo(json("{}"));
        assertThat(recorder.lines).containsExactly(": {\"a\":1} -> {}");
        assertThat(world.remove("")).isEqualTo(json("{}"));
        assertThat(world.version()).isEqualTo(1);
    }

    // ---------------------------------------------------------------- listeners

    @Test
    void listenersHearEveryChangeInOrderUntilRemoved() throws Exception {
        WorldState world = new WorldState();
        List<String> heard = new ArrayList<>();
        WorldListener first = (w, change) -> heard.add("first " + change.path());
        WorldListener second = (w, change) -> heard.add("second " + change.path());
        WorldListener failing = (w, change) -> {
            throw new IllegalStateException("listener bug (expected in this test)");
        };
        world.addListener(first);
        world.addListener(failing);
        world.addListener(second);
        dev.oam.core.Log.Level level = dev.oam.core.Log.level();
        dev.oam.core.Log.setLevel(dev.oam.core.Log.Level.OFF);
        try {
            world.merge("", json("{\"a\":1,\"b\":2}"));
        } finally {
            dev.oam.core.Log.setLevel(level);
        }
        world.removeListener(first);
        world.removeListener(failing);
        world.set("c", json("3"));
        assertThat(heard).containsExactly("first a", "second a", "first b", "second b", "second c");
    }

    @Test
    void listenersRunWhileTheLockIsHeldSoConcurrentChangesArriveInVersionOrder() throws Exception {
        WorldState world = world("{\"n\":0}");
        List<Long> versions = new ArrayList<>();
        world.addListener((w, change) -> versions.add(w.version()));
        int threads = 4;
        int each = 200;
        CountDownLatch start = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            workers.add(Thread.ofPlatform().start(() -> {
                try {
                    start.await();
                    for (int i = 0; i < each; i++) {
                        world.atomically(() -> world.set(
                                "n", json(String.valueOf(world.get("n").asInt() + 1))));
                    }
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }));
        }
        start.countDown();
        for (Thread worker : workers) {
            worker.join();
        }
        assertThat(world.get("n").asInt()).isEqualTo(threads * each);
        assertThat(world.version()).isEqualTo(threads * each);
        assertThat(versions).hasSize(threads * each);
        for (int i = 0; i < versions.size(); i++) {
            assertThat(versions.get(i)).isEqualTo(i + 1L);
        }
    }

    // ---------------------------------------------------------------- summary

    @Test
    void summaryFlattensLeavesAsDottedPaths() throws Exception {
        WorldState world = world("""
                {"player":{"name":"Aria","gold":12,"alive":true,"title":null,"bag":["rope","torch"],"stats":{}},
                 "time_of_day":"night","deep":{"a":{"b":{"c":{"d":{"e":1}}}}}}""");
        assertThat(world.summary(List.of("player", "time_of_day", "missing.path", "a..b", "deep"), 30))
                .isEqualTo("""
                player.name: Aria
                player.gold: 12
                player.alive: true
                player.title: null
                player.bag: ["rope","torch"]
                player.stats: {}
                time_of_day: night
                deep.a.b.c.d: {"e":1}""");
        assertThat(world.summary(List.of("player.name", "player.bag.1"), 30))
                .isEqualTo("player.name: Aria\nplayer.bag.1: torch");
        assertThat(world.summary(List.of("nothing"), 30)).isEmpty();
    }

    @Test
    void summaryOfTheRootNamesItsKeysAndAnEmptyRootIsState() throws Exception {
        assertThat(world("{\"a\":1,\"b\":{\"c\":\"x\"}}").summary(List.of(""), 30))
                .isEqualTo("a: 1\nb.c: x");
        assertThat(new WorldState().summary(List.of(""), 30)).isEqualTo("state: {}");
    }

    @Test
    void summaryCutsLongValuesAndLines() throws Exception {
        String longText = "x".repeat(250);
        WorldState world = new WorldState();
        world.set("note", json("\"" + longText + "\""));
        world.set("list", Json.mapper().valueToTree(List.of("y".repeat(300))));
        String[] lines = world.summary(List.of("note", "list"), 30).split("\n");
        assertThat(lines[0]).isEqualTo("note: " + "x".repeat(197) + "...");
        assertThat(lines[1]).startsWith("list: [\"yyy").endsWith("...").hasSize("list: ".length() + 200);
        world.set("", json("{\"k1\":1,\"k2\":2,\"k3\":3,\"k4\":4,\"k5\":5}"));
        assertThat(world.summary(List.of(""), 3)).isEqualTo("k1: 1\nk2: 2\nk3: 3\n(2 more not shown)");
        assertThat(world.summary(List.of(""), 5)).doesNotContain("more not shown");
    }
}
