package dev.oam.game.npc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.agent.TurnContext;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolReply;
import dev.oam.core.transcript.TranscriptEntry;
import dev.oam.game.testing.RecordingModel;
import dev.oam.game.testing.Tools;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The NPC as a typed object: talk with events, the guardrail fallback, compaction, save state and barks. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class NpcTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final Persona GORM =
            Persona.builder("Gorm").role("the village blacksmith.").build();

    private static NpcState state(NpcOptions options, List<dev.oam.core.tool.ToolDefinition> tools) {
        return new NpcState(GORM, options, Memory.EMPTY, tools, List.of(), null);
    }

    private static String reply(String emotion, String line) {
        return "{\"json\":{\"emotion\":\"" + emotion + "\",\"line\":\"" + line
                + "\",\"player_options\":[],\"ends_conversation\":false},\"chunks\":3}";
    }

    private static NpcReply talk(Npc npc, String line, ToolChannel tools, NpcEvent.Listener events)
            throws AgentException {
        return npc.talk(NpcTalk.of(line), tools, events, CancellationToken.create(), TurnContext.CommitPoint.NONE);
    }

    @Test
    void talkRunsClientAndMemoryToolsStreamsTheLineAndCommitsMemory() throws Exception {
        RecordingModel model =
                RecordingModel.playing("[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{}},"
                        + "{\"name\":\"remember_fact\",\"arguments\":{\"fact\":\"The player wants an axe.\"}}]},"
                        + reply("happy", "Axes are in stock.") + "]");
        NpcOptions options = NpcOptions.builder(TIMEOUT).rememberFact(true).build();
        Npc npc = new Npc("gorm", state(options, List.of(Tools.tool("check_inventory"))), null, model);
        Tools client = Tools.answering("3 axes");
        List<NpcEvent> events = new ArrayList<>();

        NpcReply reply = talk(npc, "Any axes?", client, events::add);

        assertThat(reply.line()).isEqualTo("Axes are in stock.");
        assertThat(reply.emotion()).isEqualTo(Emotion.HAPPY);
        assertThat(reply.isFallback()).isFalse();
        assertThat(reply.toolCalls())
                .extracting(r -> r.call().name())
                .containsExactly("check_inventory", "remember_fact");
        assertThat(client.calls())
                .extracting(c -> c.name())
                .containsExactly("check_inventory"); // memory tools run here
        assertThat(events)
                .filteredOn(e -> e instanceof NpcEvent.ToolCallStarted)
                .extracting(e -> ((NpcEvent.ToolCallStarted) e).execution())
                .containsExactly("client", "local");
        StringBuilder replayed = new StringBuilder();
        for (NpcEvent event : events) {
            if (event instanceof NpcEvent.Line(LineTracker.Event.LineDelta delta)) {
                replayed.append(delta.delta());
            } else if (event instanceof NpcEvent.Line(LineTracker.Event.LineReset reset)) {
                replayed.setLength(0);
                replayed.append(reset.line());
            }
        }
        assertThat(replayed.toString()).isEqualTo(reply.line());
        assertThat(npc.memory().facts()).containsExactly("The player wants an axe.");
        assertThat(npc.turnCount()).isEqualTo(1);
        assertThat(npc.tools()).extracting(t -> t.name()).containsExactly("check_inventory", "remember_fact");
        JsonNode options0 =
                model.requests().get(1).schema().json().path("properties").path("player_options");
        assertThat(options0.path("items").path("minLength").asInt())
                .as("no mood word fits a player option")
                .isEqualTo(Npc.OPTION_FLOOR)
                .isGreaterThan(java.util.Arrays.stream(Emotion.values())
                        .mapToInt(e -> e.wireName().length())
                        .max()
                        .orElseThrow());
    }

    @Test
    void toolCallCompletedReachesAListenerOnTheReplysThreadOnlyWhenItAcceptsThatThread() throws Exception {
        assertThat(completedOn(true)).isEqualTo("replier");
        assertThat(completedOn(false)).isEqualTo(Thread.currentThread().getName());
    }

    /** The thread a talk's one client tool reply was announced on; the reply completes on "replier" at once. */
    private static String completedOn(boolean accepts) throws Exception {
        RecordingModel model =
                RecordingModel.playing("[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{}}]},"
                        + reply("happy", "Axes are in stock.") + "]");
        Npc npc = new Npc(
                "gorm",
                state(NpcOptions.builder(TIMEOUT).build(), List.of(Tools.tool("check_inventory"))),
                null,
                model);
        ToolChannel replying = new ToolChannel() {
            @Override
            public PendingCall send(ToolCall call) {
                return send(call, pending -> {});
            }

            @Override
            public PendingCall send(ToolCall call, Consumer<? super PendingCall> beforeSending) {
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
                        .start(() -> reply.complete(ToolReply.output(TextNode.valueOf("3 axes"))));
                try {
                    replier.join();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                return pending;
            }
        };
        List<String> threads = new CopyOnWriteArrayList<>();
        NpcEvent.Listener events = new NpcEvent.Listener() {
            @Override
            public void onEvent(NpcEvent event) {
                if (event instanceof NpcEvent.ToolCallCompleted) {
                    threads.add(Thread.currentThread().getName());
                }
            }

            @Override
            public boolean acceptsReplyThread() {
                return accepts;
            }
        };

        NpcReply reply = talk(npc, "Any axes?", replying, events);

        assertThat(reply.toolCalls()).extracting(r -> r.output().asText()).containsExactly("3 axes");
        assertThat(threads).hasSize(1);
        return threads.get(0);
    }

    @Test
    void aBlockedTurnFallsBackWithoutChangingMemoryOrAskingForCompaction() throws Exception {
        RecordingModel model = RecordingModel.playing("[{\"toolCalls\":[{\"name\":\"remember_fact\",\"arguments\":"
                + "{\"fact\":\"Lost.\"}}]},{\"error\":\"guardrail_violation\"}]");
        NpcOptions options = NpcOptions.builder(TIMEOUT)
                .replyFormat(ReplyFormat.STRUCTURED)
                .rememberFact(true)
                .fallbackLines(List.of("Hm."))
                .compactAfterTurns(1)
                .keepRecentTurns(0)
                .build();
        Npc npc = new Npc("gorm", state(options, List.of()), null, model);

        NpcReply reply = talk(npc, "Say something bad.", ToolChannel.NONE, NpcEvent.Listener.NONE);

        assertThat(reply.isFallback()).isTrue();
        assertThat(reply.line()).isEqualTo("Hm.");
        assertThat(reply.emotion()).isEqualTo(GORM.defaultEmotion());
        assertThat(npc.memory()).isEqualTo(Memory.EMPTY);
        assertThat(npc.turnCount()).isZero();
        assertThat(npc.compactionDue()).isFalse();
    }

    @Test
    void aReplyIsTheNpcsDialogueAndTheGroundingToolAnswersOncePerTurn() throws Exception {
        RecordingModel model =
                RecordingModel.playing("[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{}}]},"
                        + reply("happy", "Three axes, 12 gold each.") + "]");
        NpcOptions options =
                NpcOptions.builder(TIMEOUT).groundingTool("check_inventory").build();
        Npc npc = new Npc(
                "gorm", state(options, List.of(Tools.tool("check_inventory"), Tools.tool("look"))), null, model);

        NpcReply reply = talk(npc, "Any axes?", Tools.answering("3 axes, 12 gold"), e -> {});

        assertThat(reply.line()).isEqualTo("Three axes, 12 gold each.");
        assertThat(model.requests()).hasSize(2);
        assertThat(model.requests().get(0).tools()).extracting(t -> t.name()).containsExactly("check_inventory");
        assertThat(model.requests().get(1).tools())
                .as("after the grounding round: the other tools only")
                .extracting(t -> t.name())
                .containsExactly("look");
        assertThat(model.requests().get(1).listedTools())
                .as("the listing, and the prompt's prefix, unchanged")
                .extracting(t -> t.name())
                .containsExactly("check_inventory", "look");
        assertThat(model.requests())
                .extracting(r -> r.options().dialogue())
                .as("the reply is the NPC's line of dialogue")
                .containsOnly(new dev.oam.core.model.DialogueForm("Gorm", "Player", GORM.maxSentences()));
    }

    @Test
    void aNamedToolChoiceTheNpcLacksIsAnInvalidRequest() {
        Npc npc = new Npc(
                "gorm",
                state(NpcOptions.defaults(TIMEOUT), List.of(Tools.tool("look"))),
                null,
                RecordingModel.playing("[]"));
        assertThatThrownBy(() -> npc.talk(
                        new NpcTalk("Hi", null, new ToolChoice.Named("nope")),
                        ToolChannel.NONE,
                        NpcEvent.Listener.NONE,
                        CancellationToken.create(),
                        TurnContext.CommitPoint.NONE))
                .isInstanceOf(AgentException.class)
                .satisfies(e -> assertThat(((AgentException) e).code()).isEqualTo(ErrorCode.INVALID_REQUEST))
                .hasMessage("The NPC 'gorm' has no tool 'nope'.");
    }

    @Test
    void compactionFoldsOlderTurnsIntoTheSummaryAndKeepsTheRecentOnes() throws Exception {
        RecordingModel model = RecordingModel.playing("[" + reply("neutral", "One.") + "," + reply("neutral", "Two.")
                + ",{\"text\":\"The player asked twice.\"}]");
        NpcOptions options = NpcOptions.builder(TIMEOUT)
                .compactAfterTurns(2)
                .keepRecentTurns(1)
                .build();
        Npc npc = new Npc("gorm", state(options, List.of()), null, model);

        talk(npc, "First", ToolChannel.NONE, NpcEvent.Listener.NONE);
        assertThat(npc.compactionDue()).isFalse();
        talk(npc, "Second", ToolChannel.NONE, NpcEvent.Listener.NONE);
        assertThat(npc.compactionDue()).isTrue();
        List<String> commits = new ArrayList<>();
        npc.compact(CancellationToken.create(), () -> commits.add("commit"));

        assertThat(commits).containsExactly("commit");
        assertThat(npc.memory().summary()).isEqualTo("The player asked twice.");
        assertThat(npc.state().transcript())
                .filteredOn(e -> e instanceof TranscriptEntry.Prompt)
                .hasSize(1)
                .allSatisfy(e -> assertThat(((TranscriptEntry.Prompt) e).text()).endsWith("Second"));
        dev.oam.core.model.ModelRequest summarizer = model.requests().get(2);
        assertThat(summarizer.instructions()).startsWith("You keep Gorm's memory of talking with the player");
        assertThat(summarizer.tools()).isEmpty();
        assertThat(summarizer.entries())
                .singleElement()
                .satisfies(e -> assertThat(((TranscriptEntry.Prompt) e).text())
                        .isEqualTo("Conversation to fold into the summary:\nPlayer: First\nGorm: One."));
    }

    @Test
    void aSecondCompactionMergesIntoTheSummarySoFar() throws Exception {
        RecordingModel model = RecordingModel.playing("[" + reply("neutral", "One.") + "," + reply("neutral", "Two.")
                + ",{\"text\":\"  They met.  \"}," + reply("neutral", "Three.") + ",{\"text\":\"They met twice.\"}]");
        NpcOptions options = NpcOptions.builder(TIMEOUT)
                .compactAfterTurns(2)
                .keepRecentTurns(1)
                .build();
        Npc npc = new Npc("gorm", state(options, List.of()), null, model);
        talk(npc, "First", ToolChannel.NONE, NpcEvent.Listener.NONE);
        talk(npc, "Second", ToolChannel.NONE, NpcEvent.Listener.NONE);
        npc.compact(CancellationToken.create(), TurnContext.CommitPoint.NONE);
        assertThat(npc.memory().summary()).isEqualTo("They met.");
        talk(npc, "Third", ToolChannel.NONE, NpcEvent.Listener.NONE);
        assertThat(npc.compactionDue()).isTrue();
        npc.compact(CancellationToken.create(), TurnContext.CommitPoint.NONE);

        assertThat(npc.memory().summary()).isEqualTo("They met twice.");
        assertThat(((TranscriptEntry.Prompt) model.requests().get(4).entries().get(0)).text())
                .isEqualTo(
                        "Summary so far: They met.\n\nConversation to fold into the summary:\nPlayer: Second\nGorm: Two.");
    }

    @Test
    void aCancelledCompactionChangesNothing() throws Exception {
        RecordingModel model = RecordingModel.playing(
                "[" + reply("neutral", "One.") + "," + reply("neutral", "Two.") + ",{\"text\":\"Folded.\"}]");
        NpcOptions options = NpcOptions.builder(TIMEOUT)
                .compactAfterTurns(2)
                .keepRecentTurns(1)
                .build();
        Npc npc = new Npc("gorm", state(options, List.of()), null, model);
        talk(npc, "First", ToolChannel.NONE, NpcEvent.Listener.NONE);
        talk(npc, "Second", ToolChannel.NONE, NpcEvent.Listener.NONE);
        List<TranscriptEntry> before = npc.state().transcript();

        assertThatThrownBy(() -> npc.compact(CancellationToken.create(), () -> {
                    throw new AgentException(ErrorCode.CANCELLED, "The request was cancelled.");
                }))
                .isInstanceOf(AgentException.class);

        assertThat(npc.memory().summary()).isNull();
        assertThat(npc.state().transcript()).isEqualTo(before);
    }

    @Test
    void aSavedStateRestoresTheSameNpc() throws Exception {
        RecordingModel model = RecordingModel.playing("[" + reply("happy", "Welcome.") + "]");
        Memory memory = new Memory(List.of("Likes iron."), 30, "They met before.");
        Npc npc = new Npc(
                "gorm",
                new NpcState(GORM, NpcOptions.defaults(TIMEOUT), memory, List.of(Tools.tool("look")), List.of(), null),
                null,
                model);
        talk(npc, "Hello", Tools.answering("ok"), NpcEvent.Listener.NONE);

        NpcState saved = npc.state();
        Npc restored = new Npc("gorm2", saved, null, RecordingModel.playing("[]"));

        assertThat(restored.state()).isEqualTo(saved);
        assertThat(restored.turnCount()).isEqualTo(1);
        assertThat(restored.memory()).isEqualTo(memory);
        restored.reset(true);
        assertThat(restored.memory()).isEqualTo(Memory.EMPTY);
        assertThat(restored.state().transcript()).isEmpty();
        assertThat(restored.turnCount()).isZero();
    }

    @Test
    void aBarkIsOneLineWithoutHistory() throws Exception {
        RecordingModel model = RecordingModel.playing("[{\"text\":\"Gorm: \\\"Hot iron, fresh bread!\\\"\"}]");
        Npc npc = new Npc("gorm", state(NpcOptions.defaults(TIMEOUT), List.of()), null, model);

        NpcBark bark = npc.bark(Json.parse("\"Market day.\""), CancellationToken.create());

        assertThat(bark.line()).isEqualTo("Hot iron, fresh bread!");
        assertThat(npc.state().transcript()).isEmpty();
        assertThat(model.requests().get(0).options().dialogue())
                .as("one sentence, as Gorm's line")
                .isEqualTo(new dev.oam.core.model.DialogueForm("Gorm", "Player", 1));
        assertThat(model.requests().get(0).toString()).contains("Market day.");
        assertThat(model.requests().get(0).prompt())
                .as("nobody spoke: no Player line to read back")
                .isEqualTo(
                        "Situation: Market day.\nSay one short line out loud, as Gorm would say it to people passing by.");
    }
}
