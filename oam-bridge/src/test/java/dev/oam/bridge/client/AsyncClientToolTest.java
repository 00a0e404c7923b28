package dev.oam.bridge.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.json.Json;
import dev.oam.core.model.ScriptedModel;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Asynchronous client tools and a game with one thread of its own (a Minecraft server tick, an engine's main thread):
 * the test thread plays that thread, a single-threaded "tick" executor that runs queued work and never blocks on a
 * turn.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class AsyncClientToolTest {
    private static BridgeConfiguration scripted(String secondStep) throws Exception {
        ScriptedModel model = ScriptedModel.fromJson(
                Json.parse("{\"type\":\"scripted\",\"steps\":["
                        + "{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{}}]}," + secondStep + "]}"),
                "model");
        return BridgeConfiguration.builder().systemModel(model).build();
    }

    @Test
    void aToolThatMustRunOnTheTickThreadIsAnsweredWhileThatThreadKeepsTicking() throws Exception {
        BlockingQueue<Runnable> ticks = new LinkedBlockingQueue<>();
        Executor nextTick = ticks::add; // the game's "run this on the next tick"
        Thread gameThread = Thread.currentThread();
        AtomicReference<Thread> handlerRanOn = new AtomicReference<>();
        AtomicReference<Thread> workRanOn = new AtomicReference<>();
        try (Oam oam = Oam.create(scripted("{\"template\":\"The gate: {toolOutput}\"}"))) {
            ClientTool openGate = ClientTool.async("open_gate", "Opens the castle gate.", call -> {
                handlerRanOn.set(Thread.currentThread());
                return CompletableFuture.supplyAsync(
                        () -> {
                            workRanOn.set(Thread.currentThread());
                            return "open";
                        },
                        nextTick);
            });
            OamSession guard = oam.sessions().create("You guard the castle gate.", openGate);
            CompletableFuture<SessionReply> turn = guard.respond("Let me in, please.");
            turn.whenComplete((reply, error) -> ticks.add(() -> {})); // wakes the tick loop when the turn ends
            int ticked = 0;
            while (!turn.isDone()) { // the game loop: one tick runs queued work; it never joins the turn
                ticks.take().run();
                ticked++;
            }
            assertThat(turn.join().text()).isEqualTo("The gate: open");
            assertThat(workRanOn.get()).isSameAs(gameThread);
            assertThat(handlerRanOn.get()).isNotNull().isNotSameAs(gameThread);
            // At least the tool's work; the wake-up may come after the loop saw the turn done.
            assertThat(ticked).isGreaterThanOrEqualTo(1);
        }
    }

    @Test
    void aStageCompletedExceptionallyIsAnErrorOutputTheModelSees() throws Exception {
        try (Oam oam = Oam.create(scripted("{\"template\":\"{toolOutput}\"}"))) {
            ClientTool openGate = ClientTool.async(
                    "open_gate",
                    "Opens the castle gate.",
                    call -> CompletableFuture.failedFuture(new IllegalStateException("the chain is jammed")));
            SessionReply reply = oam.sessions()
                    .create("You guard the castle gate.", openGate)
                    .respond("Open up.")
                    .join();
            assertThat(reply.text()).contains("the chain is jammed");
        }
    }

    @Test
    void aHandlerThatReturnsNoStageIsAnErrorOutputNotAHang() throws Exception {
        try (Oam oam = Oam.create(scripted("{\"template\":\"{toolOutput}\"}"))) {
            ClientTool openGate = ClientTool.async("open_gate", "Opens the castle gate.", call -> null);
            SessionReply reply = oam.sessions()
                    .create("You guard the castle gate.", openGate)
                    .respond("Open up.")
                    .join();
            assertThat(reply.text()).contains("returned no CompletionStage");
        }
    }
}
