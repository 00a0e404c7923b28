package dev.oam.bridge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.BridgeExtension;
import dev.oam.bridge.spi.ExtensionContext;
import dev.oam.bridge.spi.MethodRegistry;
import dev.oam.bridge.spi.Reply;
import dev.oam.core.json.Json;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The in-process Java API and the engine mechanisms that the wire contract cannot reach. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EngineApiTest {
    private final List<String> lines = new CopyOnWriteArrayList<>();

    private static JsonNode json(String text) throws Exception {
        return Json.parse(text);
    }

    @Test
    void callCompletesWithTheResultAfterItsEventsWereDelivered() throws Exception {
        try (BridgeEngine engine = new BridgeEngine(BridgeConfiguration.defaults(), lines::add)) {
            engine.call(
                            "session/create",
                            json(
                                    "{\"session\":\"g\",\"model\":{\"type\":\"scripted\",\"steps\":[{\"text\":\"a b c d\",\"chunks\":4}]}}"))
                    .get(10, TimeUnit.SECONDS);
            CompletableFuture<JsonNode> turn =
                    engine.call("session/respond", json("{\"session\":\"g\",\"prompt\":\"x\",\"stream\":true}"));
            JsonNode result = turn.get(10, TimeUnit.SECONDS);
            assertThat(result.path("text").asText()).isEqualTo("a b c d");
            List<String> events =
                    lines.stream().filter(l -> l.contains("\"session/event\"")).toList();
            assertThat(events).hasSizeGreaterThanOrEqualTo(4);
            assertThat(events.get(0)).contains("\"requestId\":\"local-");
            assertThat(lines).noneMatch(l -> l.contains("\"result\""));
        }
    }

    @Test
    void callFailsWithABridgeException() throws Exception {
        try (BridgeEngine engine = new BridgeEngine(BridgeConfiguration.defaults(), lines::add)) {
            CompletableFuture<JsonNode> missing =
                    engine.call("session/respond", json("{\"session\":\"nope\",\"prompt\":\"x\"}"));
            assertThatThrownBy(() -> missing.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(BridgeException.class)
                    .satisfies(e -> assertThat(((BridgeException) e).code()).isEqualTo(-32020));
            CompletableFuture<JsonNode> unknown = engine.call("no/such", null);
            assertThatThrownBy(() -> unknown.get(10, TimeUnit.SECONDS))
                    .cause()
                    .satisfies(e -> assertThat(((BridgeException) e).dataCode()).isEqualTo("method_not_found"));
            assertThat(lines).isEmpty();
        }
    }

    @Test
    void callsAfterCloseFailWithShuttingDownInsteadOfWaitingForever() throws Exception {
        BridgeEngine engine = new BridgeEngine(BridgeConfiguration.defaults(), lines::add);
        engine.close();
        assertThatThrownBy(() -> engine.call("ping", null).get(5, TimeUnit.SECONDS))
                .isInstanceOf(ExecutionException.class)
                .cause()
                .isInstanceOf(BridgeException.class)
                .extracting(e -> ((BridgeException) e).code())
                .isEqualTo(-32023);
        ObjectNode message = (ObjectNode) Json.parse("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}");
        assertThat(engine.callMessage(message)
                        .get(5, TimeUnit.SECONDS)
                        .path("error")
                        .path("code")
                        .asInt())
                .isEqualTo(-32023);
    }

    @Test
    void callMessageReturnsTheWholeResponseAndCancelStopsItsWork() throws Exception {
        try (BridgeEngine engine = new BridgeEngine(BridgeConfiguration.defaults(), lines::add)) {
            engine.call(
                            "session/create",
                            json(
                                    "{\"session\":\"g\",\"model\":{\"type\":\"scripted\",\"steps\":[{\"text\":\"late\",\"delayMs\":60000}]}}"))
                    .get(10, TimeUnit.SECONDS);
            CompletableFuture<com.fasterxml.jackson.databind.node.ObjectNode> running = engine.callMessage(
                    (com.fasterxml.jackson.databind.node.ObjectNode)
                            json(
                                    "{\"id\":\"turn\",\"method\":\"session/respond\",\"params\":{\"session\":\"g\",\"prompt\":\"x\"}}"));
            CompletableFuture<com.fasterxml.jackson.databind.node.ObjectNode> queued = engine.callMessage(
                    (com.fasterxml.jackson.databind.node.ObjectNode)
                            json(
                                    "{\"id\":7,\"method\":\"session/respond\",\"params\":{\"session\":\"g\",\"prompt\":\"y\"}}"));
            assertThat(engine.cancel(json("7"))).isEqualTo(1);
            assertThat(queued.get(10, TimeUnit.SECONDS).toString())
                    .contains("\"id\":7")
                    .contains("-32009");
            assertThat(engine.cancel(json("\"turn\""))).isEqualTo(1);
            assertThat(running.get(10, TimeUnit.SECONDS).toString())
                    .startsWith("{\"jsonrpc\":\"2.0\",\"id\":\"turn\",\"error\"")
                    .contains("cancelled");
            assertThat(engine.cancel(json("\"turn\""))).isEqualTo(0);
            assertThat(engine.callMessage(
                                    (com.fasterxml.jackson.databind.node.ObjectNode) json("{\"method\":\"ping\"}"))
                            .get(10, TimeUnit.SECONDS)
                            .path("id")
                            .asText())
                    .startsWith("local-");
            assertThat(lines).isEmpty();
        }
    }

    @Test
    void shutdownAnswersWorkThatIgnoresCancellationWithShutDownAfterABoundedWait() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch onShutdown = new CountDownLatch(1);
        BridgeExtension stubborn = new BridgeExtension() {
            @Override
            public void register(MethodRegistry.Builder registry, ExtensionContext context) {
                registry.register(
                        "test/stubborn",
                        request -> Reply.deferred(token -> {
                            release.await();
                            return Json.object();
                        }));
            }
        };
        BridgeConfiguration configuration = BridgeConfiguration.builder()
                .extensions(() -> stubborn)
                .onShutdown(onShutdown::countDown)
                .build();
        BridgeEngine engine = new BridgeEngine(configuration, lines::add);
        try {
            engine.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/stubborn\"}");
            long start = System.nanoTime();
            engine.receive("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"shutdown\"}");
            assertThat(onShutdown.await(10, TimeUnit.SECONDS)).isTrue();
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // The grace period is 2 s: shutdown waited for it (a lower bound, which load cannot break; no upper one).
            assertThat(waited).isGreaterThanOrEqualTo(1500L);
            assertThat(lines).hasSize(2);
            assertThat(lines.get(0)).contains("\"id\":1").contains("-32023").contains("shut_down");
            assertThat(lines.get(1)).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}");
            release.countDown();
            engine.receive("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}");
            assertThat(engine.awaitIdle(Duration.ofSeconds(5))).isTrue();
            waitForLines(3);
            assertThat(lines).hasSize(3);
            assertThat(lines.get(2)).contains("\"id\":3").contains("-32023");
        } finally {
            release.countDown();
            engine.close();
        }
    }

    /**
     * A request is in flight from the moment it is dispatched, not only once its handler has returned: a queued
     * request's worker may claim and send its answer while the dispatcher is still in the handler, and a
     * {@code shutdown} (or {@link BridgeEngine#awaitIdle}) must count it until the answer is queued, or the
     * {@code shutdown} response could go first. The race is not reproducible on demand; this checks the invariant that
     * closes it.
     */
    @Test
    void aRequestIsInFlightWhileItsHandlerRuns() throws Exception {
        BridgeEngine[] self = new BridgeEngine[1];
        BridgeExtension probe = new BridgeExtension() {
            @Override
            public void register(MethodRegistry.Builder registry, ExtensionContext context) {
                registry.register("test/idle", request -> {
                    try {
                        return Reply.result(Json.object().put("idle", self[0].awaitIdle(Duration.ZERO)));
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                });
            }
        };
        try (BridgeEngine engine = new BridgeEngine(
                BridgeConfiguration.builder().extensions(() -> probe).build(), lines::add)) {
            self[0] = engine;
            engine.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/idle\"}");
            assertThat(engine.awaitIdle(Duration.ofSeconds(10))).isTrue();
            waitForLines(1);
            assertThat(lines.get(0)).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"idle\":false}}");
        }
    }

    /**
     * A request a worker answers before its handler returns {@code pending} (here deterministically) leaves the
     * in-flight set with that answer, so {@link BridgeEngine#awaitIdle} returns at once and {@code shutdown} does not
     * wait its 2 s for it.
     */
    @Test
    void aRequestAnsweredByAWorkerBeforeItsHandlerReturnsIsNotLeftInFlight() throws Exception {
        BridgeExtension probe = new BridgeExtension() {
            @Override
            public void register(MethodRegistry.Builder registry, ExtensionContext context) {
                registry.register("test/early", request -> {
                    Thread worker = Thread.ofVirtual()
                            .start(() -> request.respond(Json.object().put("early", true)));
                    try {
                        worker.join();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        throw new IllegalStateException(e);
                    }
                    return Reply.pending();
                });
            }
        };
        try (BridgeEngine engine = new BridgeEngine(
                BridgeConfiguration.builder().extensions(() -> probe).build(), lines::add)) {
            engine.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"test/early\"}");
            // Answered before receive returned, so idle at once (no waiting on the clock here).
            assertThat(engine.awaitIdle(Duration.ZERO)).isTrue();
            waitForLines(1);
            assertThat(lines.get(0)).isEqualTo("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"early\":true}}");
        }
    }

    @Test
    void extensionsAddMethodsAndNotificationsAfterTheCoreOnes() throws Exception {
        BridgeExtension quests = new BridgeExtension() {
            @Override
            public void register(MethodRegistry.Builder registry, ExtensionContext context) {
                registry.register(
                        "quest/narrate",
                        request -> Reply.result(
                                Json.object().put("quest", request.params().string("quest"))));
            }

            @Override
            public List<String> notificationMethods() {
                return List.of("quest/event");
            }
        };
        try (BridgeEngine engine = new BridgeEngine(
                BridgeConfiguration.builder().extensions(() -> quests).build(), lines::add)) {
            JsonNode caps =
                    engine.call("initialize", null).get(10, TimeUnit.SECONDS).path("capabilities");
            assertThat(caps.path("methods").toString()).contains("\"quest/narrate\"");
            assertThat(caps.path("notifications").toString())
                    .isEqualTo("[\"session/event\",\"tool/cancel\",\"model/progress\",\"quest/event\"]");
            assertThat(engine.call("quest/narrate", json("{\"quest\":\"q1\"}"))
                            .get(10, TimeUnit.SECONDS)
                            .path("quest")
                            .asText())
                    .isEqualTo("q1");
        }
        try (BridgeEngine engine = new BridgeEngine(
                BridgeConfiguration.builder().extensions(List.of()).build(), lines::add)) {
            JsonNode caps =
                    engine.call("initialize", null).get(10, TimeUnit.SECONDS).path("capabilities");
            assertThat(caps.path("methods").toString()).doesNotContain("quest/");
        }
    }

    @Test
    void aSinkThatThrowsDoesNotStopTheEngine() throws Exception {
        int[] calls = {0};
        try (BridgeEngine engine = new BridgeEngine(BridgeConfiguration.defaults(), line -> {
            calls[0]++;
            throw new IllegalStateException("host bug");
        })) {
            java.io.ByteArrayOutputStream captured = new java.io.ByteArrayOutputStream();
            dev.oam.core.Log.setStream(new java.io.PrintStream(captured, true));
            try {
                engine.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
                assertThat(engine.call("ping", null).get(10, TimeUnit.SECONDS)).isEqualTo(Json.object());
            } finally {
                dev.oam.core.Log.setStream(System.err);
            }
            assertThat(captured.toString()).contains("output channel failed");
        }
    }

    private void waitForLines(int count) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lines.size() < count && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
    }

    @Test
    void closeRightAfterAShutdownRequestStillDeliversItsResponse() throws Exception {
        // close() stops the writer only after the shutdown request in flight has written its response.
        BridgeEngine engine = new BridgeEngine(BridgeConfiguration.defaults(), lines::add);
        engine.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}");
        engine.receive("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"shutdown\"}");
        engine.close();
        assertThat(lines)
                .filteredOn(l -> l.contains("\"id\":2"))
                .hasSize(1)
                .first()
                .asString()
                .contains("\"result\":{}");
    }
}
