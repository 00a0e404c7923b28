package dev.oam.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.core.json.Json;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The memory caps over the protocol (docs/RELIABILITY.md, Limits): each cap, when hit, is a JSON-RPC error with the
 * code the protocol already has for it, and the state stays as it was, so a client that keeps writing gets errors, not
 * an out-of-memory death.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MemoryLimitsTest {
    private static JsonNode json(String text) throws Exception {
        return Json.parse(text);
    }

    private static BridgeEngine engine(MemoryLimits limits) {
        return new BridgeEngine(
                BridgeConfiguration.builder()
                        .backends(List.of())
                        .memoryLimits(limits)
                        .build(),
                line -> {});
    }

    private static BridgeException failure(BridgeEngine engine, String method, String params) throws Exception {
        try {
            JsonNode result = engine.call(method, json(params)).get();
            throw new AssertionError(method + " succeeded: " + result);
        } catch (ExecutionException e) {
            assertThat(e.getCause()).isInstanceOf(BridgeException.class);
            return (BridgeException) e.getCause();
        }
    }

    private static String scripted(int answers, int length) {
        StringBuilder steps = new StringBuilder();
        for (int i = 0; i < answers; i++) {
            steps.append(i == 0 ? "" : ",")
                    .append("{\"text\":\"")
                    .append("w".repeat(length))
                    .append("\"}");
        }
        return "{\"type\":\"scripted\",\"steps\":[" + steps + "]}";
    }

    @Test
    void aSessionThatKeepsTalkingHitsItsHistoryCapWithContextSizeExceeded() throws Exception {
        try (BridgeEngine engine = engine(new MemoryLimits(5_000, 1_000_000, 1 << 20, 1 << 20))) {
            engine.call("session/create", json("{\"session\":\"s\",\"model\":" + scripted(100, 500) + "}"))
                    .get();
            BridgeException error = null;
            int turns = 0;
            while (error == null) {
                try {
                    engine.call("session/respond", json("{\"session\":\"s\",\"prompt\":\"more\"}"))
                            .get();
                    turns++;
                    assertThat(turns).as("turns before the cap").isLessThan(50);
                } catch (ExecutionException e) {
                    error = (BridgeException) e.getCause();
                }
            }
            assertThat(turns).isPositive();
            assertThat(error.code()).isEqualTo(-32004);
            assertThat(error.dataCode()).isEqualTo("context_size_exceeded");
            ObjectNode data = (ObjectNode) error.toJson().get("data");
            assertThat(data.path("scope").asText()).isEqualTo("conversation");
            assertThat(data.path("limit").asLong()).isEqualTo(5_000);
            JsonNode transcript = engine.call("session/transcript", json("{\"session\":\"s\"}"))
                    .get();
            assertThat(transcript.path("transcript").path("transcript").path("entries"))
                    .hasSize(2 * turns);
            // Deleting frees the room: a new session can talk again.
            engine.call("session/delete", json("{\"session\":\"s\"}")).get();
            engine.call("session/create", json("{\"session\":\"t\",\"model\":" + scripted(1, 10) + "}"))
                    .get();
            assertThat(engine.call("session/respond", json("{\"session\":\"t\",\"prompt\":\"hi\"}"))
                            .get()
                            .path("text")
                            .asText())
                    .isEqualTo("w".repeat(10));
        }
    }

    @Test
    void allSessionsAndNpcsTogetherHitTheTotalHistoryCap() throws Exception {
        try (BridgeEngine engine = engine(new MemoryLimits(100_000, 2_000, 1 << 20, 1 << 20))) {
            engine.call("session/create", json("{\"session\":\"a\",\"model\":" + scripted(1, 1_500) + "}"))
                    .get();
            engine.call("session/respond", json("{\"session\":\"a\",\"prompt\":\"talk\"}"))
                    .get();
            engine.call(
                            "npc/create",
                            json("{\"npc\":\"gorm\",\"persona\":{\"name\":\"Gorm\"},\"model\":" + scripted(1, 10)
                                    + "}"))
                    .get();

            BridgeException error =
                    failure(engine, "npc/talk", "{\"npc\":\"gorm\",\"line\":\"" + "m".repeat(600) + "\"}");

            assertThat(error.code()).isEqualTo(-32004);
            assertThat(error.toJson().path("data").path("scope").asText()).isEqualTo("total");
            assertThat(error.toJson().path("data").path("limit").asLong()).isEqualTo(2_000);
        }
    }

    @Test
    void aRestoredHistoryPastTheCapIsRefused() throws Exception {
        try (BridgeEngine engine = engine(new MemoryLimits(1_000, 1_000_000, 1 << 20, 1 << 20))) {
            String history =
                    "{\"entries\":[{\"id\":\"P\",\"role\":\"user\",\"contents\":[{\"type\":\"text\",\"id\":\"P-t\",\"text\":\""
                            + "h".repeat(2_000) + "\"}]}]}";
            BridgeException session = failure(
                    engine, "session/create", "{\"session\":\"s\",\"model\":\"scripted\",\"history\":" + history + "}");
            assertThat(session.code()).isEqualTo(-32004);
            BridgeException npc = failure(
                    engine,
                    "npc/restore",
                    "{\"npc\":\"n\",\"model\":\"scripted\",\"state\":{\"version\":1,"
                            + "\"persona\":{\"name\":\"N\"},\"transcript\":" + history + "}}");
            assertThat(npc.code()).isEqualTo(-32004);
            assertThat(engine.call("session/list", null).get().path("sessions")).isEmpty();
            assertThat(engine.call("npc/list", null).get().path("npcs")).isEmpty();
        }
    }

    @Test
    void worldWritesPastTheWorldCapAreLimitReachedAndChangeNothing() throws Exception {
        try (BridgeEngine engine = engine(new MemoryLimits(1 << 20, 1 << 20, 1_000, 1_500))) {
            engine.call("world/create", json("{\"world\":\"w\",\"state\":{\"gate\":{\"open\":false}}}"))
                    .get();
            BridgeException error = null;
            int writes = 0;
            while (error == null) {
                try {
                    engine.call(
                                    "world/set",
                                    json("{\"world\":\"w\",\"path\":\"log." + writes + "\",\"value\":\""
                                            + "x".repeat(100) + "\"}"))
                            .get();
                    writes++;
                    assertThat(writes).as("writes before the cap").isLessThan(20);
                } catch (ExecutionException e) {
                    error = (BridgeException) e.getCause();
                }
            }
            assertThat(error.code()).isEqualTo(-32055);
            assertThat(error.dataCode()).isEqualTo("limit_reached");
            JsonNode data = error.toJson().path("data");
            assertThat(data.path("limit").asLong()).isEqualTo(1_000);
            assertThat(data.path("scope").asText()).isEqualTo("world");
            assertThat(data.path("world").asText()).isEqualTo("w");
            assertThat(data.path("path").asText()).isEqualTo("log." + writes);
            JsonNode snapshot =
                    engine.call("world/snapshot", json("{\"world\":\"w\"}")).get();
            assertThat(snapshot.path("state").path("log")).hasSize(writes);
            assertThat(snapshot.path("version").asLong()).isEqualTo(writes);

            BridgeException merge =
                    failure(engine, "world/merge", "{\"world\":\"w\",\"patch\":{\"big\":\"" + "y".repeat(900) + "\"}}");
            assertThat(merge.code()).isEqualTo(-32055);
        }
    }

    @Test
    void worldsTogetherHitTheTotalWorldCapAndADeletedWorldFreesItsShare() throws Exception {
        try (BridgeEngine engine = engine(new MemoryLimits(1 << 20, 1 << 20, 1_000, 1_500))) {
            engine.call("world/create", json("{\"world\":\"a\",\"state\":{\"s\":\"" + "a".repeat(800) + "\"}}"))
                    .get();
            BridgeException tooBig = failure(
                    engine, "world/create", "{\"world\":\"b\",\"state\":{\"s\":\"" + "b".repeat(1_200) + "\"}}");
            assertThat(tooBig.code()).isEqualTo(-32055);
            assertThat(tooBig.toJson().path("data").path("scope").asText()).isEqualTo("world");
            BridgeException total =
                    failure(engine, "world/create", "{\"world\":\"b\",\"state\":{\"s\":\"" + "b".repeat(800) + "\"}}");
            assertThat(total.code()).isEqualTo(-32055);
            assertThat(total.toJson().path("data").path("scope").asText()).isEqualTo("total");
            assertThat(total.toJson().path("data").path("limit").asLong()).isEqualTo(1_500);
            assertThat(engine.call("world/list", null).get().path("worlds")).hasSize(1);

            engine.call("world/delete", json("{\"world\":\"a\"}")).get();
            engine.call("world/create", json("{\"world\":\"b\",\"state\":{\"s\":\"" + "b".repeat(800) + "\"}}"))
                    .get();
        }
    }
}
