package dev.oam.core.agent;

import static dev.oam.core.testing.Fixtures.context;
import static dev.oam.core.testing.Fixtures.object;
import static dev.oam.core.testing.Fixtures.tool;
import static dev.oam.core.testing.TestOptions.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.testing.RecordingListener;
import dev.oam.core.testing.RecordingToolChannel;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.tool.ToolReply;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** One tool round on its own: calls answered at once, completion order, timeouts and cancellation. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ToolRoundTest {
    private static final List<ToolDefinition> ENABLED = List.of(tool("look"), tool("open_gate"));

    private final RecordingListener listener = new RecordingListener();

    private static ToolCall call(String id, String name, String arguments) {
        return new ToolCall(id, name, object(arguments));
    }

    @Test
    void callsThatCannotRunAreAnsweredAtOnceFirstAndNeverSent() throws AgentException {
        RecordingToolChannel channel = RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("seen")));
        List<ToolCall> calls = List.of(
                call("c1", "look", "{}"),
                call("c2", "fly", "{}"),
                call("c3", "open_gate", "{\"gate\": 3}"),
                call("c4", "look", "{}"));

        List<ToolRecord> records = ToolRound.run(calls, ENABLED, 1, 4, options().build(), context(listener, channel));

        assertThat(records).extracting(record -> record.call().id()).containsExactly("c2", "c3", "c4", "c1");
        assertThat(records.get(0).output().asText())
                .isEqualTo("Tool 'fly' is not available. Available tools: look, open_gate.");
        assertThat(records.get(1).output().asText()).startsWith("Invalid arguments for 'open_gate': ");
        assertThat(records.get(2).output().asText()).startsWith("Tool call limit reached (maxToolCalls is 4)");
        assertThat(records.subList(0, 3)).allMatch(ToolRecord::isError);
        assertThat(records.get(3).isError()).isFalse();
        assertThat(channel.sent()).extracting(ToolCall::id).containsExactly("c1");
    }

    @Test
    void everyCallIsAnnouncedBeforeAnyIsSentAndEachCompletionAfter() throws AgentException {
        RecordingToolChannel channel = RecordingToolChannel.answeringWith(ToolReply.output(TextNode.valueOf("seen")));

        ToolRound.run(
                List.of(call("c1", "look", "{}"), call("c2", "open_gate", "{}")),
                ENABLED,
                0,
                12,
                options().build(),
                context(listener, channel));

        assertThat(listener.events())
                .extracting(event -> event.getClass().getSimpleName())
                .containsExactly("ToolCallStarted", "ToolCallStarted", "ToolCallCompleted", "ToolCallCompleted");
    }

    @Test
    void recordsComeBackInCompletionOrder() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        CompletableFuture<List<ToolRecord>> round = CompletableFuture.supplyAsync(() -> run(
                List.of(call("c1", "look", "{}"), call("c2", "open_gate", "{}")),
                options().build(),
                channel,
                CancellationToken.create()));

        channel.awaitSent(2);
        channel.answer("c2", ToolReply.output(TextNode.valueOf("open")));
        listener.await(
                TurnEvent.ToolCallCompleted.class,
                event -> event.record().call().id().equals("c2"));
        channel.answer("c1", ToolReply.output(TextNode.valueOf("dark")));

        assertThat(round.get(10, TimeUnit.SECONDS))
                .extracting(record -> record.call().id())
                .containsExactly("c2", "c1");
    }

    @Test
    void aCallPastItsTimeoutIsAbandonedAndTheModelIsTold() throws AgentException {
        RecordingToolChannel channel = RecordingToolChannel.manual(); // never answers
        List<ToolDefinition> enabled = List.of(tool("look", Duration.ofMillis(5)));

        List<ToolRecord> records = ToolRound.run(
                List.of(call("c1", "look", "{}")), enabled, 0, 12, options().build(), context(listener, channel));

        assertThat(records.get(0).isError()).isTrue();
        assertThat(records.get(0).output().asText()).isEqualTo("Tool 'look' timed out after 0.005s.");
        assertThat(channel.awaitAbandoned("c1")).isEqualTo("Error: Tool 'look' timed out after 0.005s.");
    }

    @Test
    void cancellationAbandonsTheCallsStillOutstanding() throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        CancellationToken token = CancellationToken.create();
        CompletableFuture<List<ToolRecord>> round = CompletableFuture.supplyAsync(() -> run(
                List.of(call("c1", "look", "{}"), call("c2", "open_gate", "{}")),
                options().build(),
                channel,
                token));

        channel.awaitSent(2);
        channel.answer("c1", ToolReply.output(TextNode.valueOf("dark")));
        listener.await(
                TurnEvent.ToolCallCompleted.class,
                event -> event.record().call().id().equals("c1"));
        token.cancel();

        assertThat(round)
                .failsWithin(10, TimeUnit.SECONDS)
                .withThrowableThat()
                .havingRootCause()
                .isInstanceOfSatisfying(
                        AgentException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CANCELLED));
        assertThat(channel.awaitAbandoned("c2")).isEqualTo("The request was cancelled.");
        assertThat(channel.abandons())
                .extracting(RecordingToolChannel.Abandon::callId)
                .containsExactly("c2");
    }

    private List<ToolRecord> run(
            List<ToolCall> calls, AgentOptions opts, RecordingToolChannel channel, CancellationToken token) {
        try {
            return ToolRound.run(calls, ENABLED, 0, 12, opts, context(token, listener, channel));
        } catch (AgentException e) {
            throw new java.util.concurrent.CompletionException(e);
        }
    }
    /**
     * The thread each completion was announced on, when the turn's listener accepts the thread completing a reply or
     * not.
     */
    private static List<String> completionThreads(boolean accepts) throws Exception {
        RecordingToolChannel channel = RecordingToolChannel.manual();
        List<String> seen = new java.util.ArrayList<>();
        TurnListener listener = new TurnListener() {
            @Override
            public void onEvent(TurnEvent event) {
                synchronized (seen) {
                    seen.add(event.getClass().getSimpleName()
                            + (event instanceof TurnEvent.ToolCallCompleted completed
                                    ? " " + completed.record().call().id() + " on "
                                            + Thread.currentThread().getName()
                                    : ""));
                }
            }

            @Override
            public boolean acceptsReplyThread() {
                return accepts;
            }
        };
        CompletableFuture<List<ToolRecord>> round = new CompletableFuture<>();
        Thread turn = Thread.ofPlatform().name("turn").start(() -> {
            try {
                round.complete(ToolRound.run(
                        List.of(call("c1", "look", "{}"), call("c2", "open_gate", "{}")),
                        ENABLED,
                        0,
                        12,
                        options().build(),
                        context(listener, channel)));
            } catch (Throwable e) {
                round.completeExceptionally(e);
            }
        });
        channel.awaitSent(2);
        // Parked, waiting for a reply (the only place it parks; timed, since the tool has a timeout).
        while (turn.getState() != Thread.State.TIMED_WAITING && turn.getState() != Thread.State.WAITING) {
            Thread.sleep(1);
        }
        Thread replier = Thread.ofPlatform()
                .name("replier")
                .start(() -> channel.answer("c2", ToolReply.output(TextNode.valueOf("open"))));
        replier.join();
        if (accepts) {
            synchronized (seen) {
                assertThat(seen).as("announced before answer() returned").contains("ToolCallCompleted c2 on replier");
            }
        }
        Thread second = Thread.ofPlatform()
                .name("replier")
                .start(() -> channel.answer("c1", ToolReply.output(TextNode.valueOf("dark"))));
        second.join();
        assertThat(round.get(10, TimeUnit.SECONDS))
                .extracting(record -> record.call().id())
                .containsExactly("c2", "c1");
        synchronized (seen) {
            return seen.stream()
                    .filter(event -> event.startsWith("ToolCallCompleted"))
                    .toList();
        }
    }

    @Test
    void aListenerThatAcceptsItGetsEachReplyAnnouncedOnTheThreadThatCompletesItInCompletionOrder() throws Exception {
        List<String> completions = completionThreads(true).stream()
                .filter(event -> event.startsWith("ToolCallCompleted"))
                .toList();
        // c1's reply may find the turn's thread busy with the round (it was just woken by c2's), and leave it the
        // record.
        assertThat(completions).hasSize(2).first().isEqualTo("ToolCallCompleted c2 on replier");
        assertThat(completions.get(1)).isIn("ToolCallCompleted c1 on replier", "ToolCallCompleted c1 on turn");
    }

    @Test
    void otherwiseEveryReplyIsAnnouncedOnTheTurnsThread() throws Exception {
        assertThat(completionThreads(false))
                .containsExactly("ToolCallCompleted c2 on turn", "ToolCallCompleted c1 on turn");
    }

    @Test
    void aReplyThatComesBackBeforeSendReturnsIsAnnouncedOnTheThreadThatCompletesIt() throws Exception {
        // As when the turn's thread is descheduled right after writing tool/call and the client answers meanwhile.
        ToolChannel channel = new ToolChannel() {
            @Override
            public PendingCall send(ToolCall call) {
                return send(call, pending -> {});
            }

            @Override
            public PendingCall send(ToolCall call, java.util.function.Consumer<? super PendingCall> beforeSending) {
                CompletableFuture<ToolReply> reply = new CompletableFuture<>();
                PendingCall pending = new PendingCall() {
                    @Override
                    public CompletableFuture<ToolReply> reply() {
                        return reply;
                    }

                    @Override
                    public void abandon(String reason) {}
                };
                beforeSending.accept(pending);
                Thread replier = Thread.ofPlatform()
                        .name("replier")
                        .start(() -> reply.complete(ToolReply.output(TextNode.valueOf("open"))));
                try {
                    replier.join();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                return pending;
            }
        };
        List<String> completions = new java.util.concurrent.CopyOnWriteArrayList<>();
        TurnListener listener = new TurnListener() {
            @Override
            public void onEvent(TurnEvent event) {
                if (event instanceof TurnEvent.ToolCallCompleted completed) {
                    completions.add(completed.record().call().id() + " on "
                            + Thread.currentThread().getName());
                }
            }

            @Override
            public boolean acceptsReplyThread() {
                return true;
            }
        };
        List<ToolRecord> records = ToolRound.run(
                List.of(call("c1", "open_gate", "{}")),
                ENABLED,
                0,
                12,
                options().build(),
                context(listener, channel));
        assertThat(records).extracting(record -> record.call().id()).containsExactly("c1");
        assertThat(completions).containsExactly("c1 on replier");
    }
}
