package dev.oam.bridge.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.ErrorCode;
import dev.oam.core.json.Json;
import dev.oam.core.model.ScriptedModel;
import dev.oam.game.decision.Decision;
import dev.oam.game.decision.DecisionOption;
import dev.oam.game.npc.Emotion;
import dev.oam.game.npc.LineTracker;
import dev.oam.game.npc.NpcEvent;
import dev.oam.game.npc.NpcOptions;
import dev.oam.game.npc.NpcReply;
import dev.oam.game.npc.Persona;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The typed in-process API: sessions with Java tools, NPC talk with events, worlds, decisions and errors. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class OamTest {
    /**
     * An engine whose system model plays these steps (docs/PROTOCOL.md, "Scripted model"), in order across everything
     * it serves.
     */
    private static Oam oam(String stepsJson) throws Exception {
        ScriptedModel model =
                ScriptedModel.fromJson(Json.parse("{\"type\":\"scripted\",\"steps\":" + stepsJson + "}"), "model");
        return Oam.create(BridgeConfiguration.builder().systemModel(model).build());
    }

    private static String npcReply(String emotion, String line) {
        return "{\"json\":{\"emotion\":\"" + emotion + "\",\"line\":\"" + line
                + "\",\"player_options\":[\"Thanks.\",\"Bye.\"],\"ends_conversation\":false},\"chunks\":4}";
    }

    @Test
    void aSessionsClientToolIsAnsweredByItsJavaHandler() throws Exception {
        List<ToolInvocation> calls = new CopyOnWriteArrayList<>();
        ClientTool openGate = ClientTool.of(
                "open_gate",
                "Opens a gate of the castle.",
                "{\"type\":\"object\",\"properties\":{\"gate\":{\"type\":\"string\",\"enum\":[\"north\",\"south\"]}},\"required\":[\"gate\"]}",
                call -> {
                    calls.add(call);
                    return "The " + call.string("gate", "?") + " gate is open.";
                });
        try (Oam oam = oam("[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"north\"}}]},"
                + "{\"text\":\"Welcome, traveller.\",\"chunks\":3}]")) {
            OamSession guard = oam.sessions().create("You guard the castle gate.", openGate);
            List<String> texts = new CopyOnWriteArrayList<>();

            SessionReply reply = guard.respond("Let me in, please.", texts::add).get(10, TimeUnit.SECONDS);

            assertThat(reply.text()).isEqualTo("Welcome, traveller.");
            assertThat(calls).extracting(c -> c.arguments()).containsExactly(Map.of("gate", "north"));
            assertThat(reply.toolCalls()).hasSize(1);
            assertThat(reply.toolCalls().get(0).call().name()).isEqualTo("open_gate");
            assertThat(reply.toolCalls().get(0).output().asText()).isEqualTo("The north gate is open.");
            assertThat(reply.toolCalls().get(0).isError()).isFalse();
            assertThat(texts).isNotEmpty().last().isEqualTo("Welcome, traveller.");
        }
    }

    @Test
    void aHandlerThatThrowsGivesTheModelAnErrorOutput() throws Exception {
        ClientTool broken = ClientTool.of("open_gate", "Opens the gate.", call -> {
            throw new IllegalStateException("The winch is broken.");
        });
        try (Oam oam = oam("[{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{}}]},{\"text\":\"Sorry.\"}]")) {
            SessionReply reply =
                    oam.sessions().create(null, broken).respond("Open up!").get(10, TimeUnit.SECONDS);

            assertThat(reply.toolCalls().get(0).isError()).isTrue();
            assertThat(reply.toolCalls().get(0).output().asText()).isEqualTo("The winch is broken.");
            assertThat(reply.text()).isEqualTo("Sorry.");
        }
    }

    @Test
    void anNpcTalksWithStreamedEventsAndItsOwnTools() throws Exception {
        ClientTool inventory = ClientTool.of("check_inventory", "Counts an item in the forge.", call -> "3 axes");
        try (Oam oam = oam("[{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{}}]},"
                + npcReply("happy", "Three axes, freshly forged.") + "]")) {
            OamNpc gorm = oam.npcs()
                    .create(
                            Persona.builder("Gorm")
                                    .role("the village blacksmith")
                                    .build(),
                            NpcOptions.builder(Duration.ofSeconds(30))
                                    .rememberFact(true)
                                    .build(),
                            inventory);
            List<NpcEvent> events = new CopyOnWriteArrayList<>();

            NpcReply reply = gorm.talk("Any axes?", events::add).get(10, TimeUnit.SECONDS);

            assertThat(gorm.toolNames()).containsExactly("check_inventory", "remember_fact");
            assertThat(reply.line()).isEqualTo("Three axes, freshly forged.");
            assertThat(reply.emotion()).isEqualTo(Emotion.HAPPY);
            assertThat(reply.playerOptions()).containsExactly("Thanks.", "Bye.");
            assertThat(reply.isFallback()).isFalse();
            assertThat(reply.toolCalls()).extracting(r -> r.output().asText()).containsExactly("3 axes");
            assertThat(events.get(0)).isInstanceOf(NpcEvent.ToolCallStarted.class);
            assertThat(((NpcEvent.ToolCallStarted) events.get(0)).execution()).isEqualTo("client");
            assertThat(events).contains(new NpcEvent.Line(new LineTracker.Event.EmotionChanged(Emotion.HAPPY)));
            StringBuilder shown = new StringBuilder();
            for (NpcEvent event : events) {
                if (event instanceof NpcEvent.Line(LineTracker.Event.LineDelta delta)) {
                    shown.append(delta.delta());
                } else if (event instanceof NpcEvent.Line(LineTracker.Event.LineReset reset)) {
                    shown.setLength(0);
                    shown.append(reset.line());
                }
            }
            assertThat(shown.toString()).isEqualTo(reply.line());
        }
    }

    @Test
    void aSavedNpcIsRestoredWithItsMemoryAndConversation() throws Exception {
        ClientTool inventory = ClientTool.of("check_inventory", "Counts an item in the forge.", call -> "2 axes");
        try (Oam oam = oam("[" + npcReply("happy", "Welcome!")
                + ",{\"toolCalls\":[{\"name\":\"check_inventory\",\"arguments\":{}}]},"
                + npcReply("neutral", "Two left.") + "]")) {
            OamNpc gorm = oam.npcs()
                    .builder(Persona.named("Gorm"))
                    .id("gorm")
                    .tools(inventory)
                    .memory(new dev.oam.game.npc.Memory(List.of("The player is called Ada."), 40, null))
                    .create();
            gorm.talk("Hello!").get(10, TimeUnit.SECONDS);
            String saved = gorm.save().get(10, TimeUnit.SECONDS);
            gorm.delete();

            OamNpc restored = oam.npcs().restore(saved, inventory);
            NpcReply reply = restored.talk("Axes?").get(10, TimeUnit.SECONDS);

            assertThat(restored.id()).isEqualTo("gorm");
            assertThat(reply.toolCalls()).extracting(r -> r.output().asText()).containsExactly("2 axes");
            assertThat(reply.relationship()).isEqualTo(40);
            assertThat(saved).contains("The player is called Ada.").contains("Hello!");
        }
    }

    @Test
    void aWorldWriteReachesItsSubscriptionBeforeTheWriteReturns() throws Exception {
        try (Oam oam = oam("[]")) {
            OamWorld village = oam.worlds().create("village", Map.of("player", Map.of("gold", 60)));
            List<WorldChanged> changes = new ArrayList<>(); // written on the writer thread before set() returns
            Subscription subscription = village.subscribe("player", changes::add);

            long version = village.set("player.gold", 45);

            assertThat(changes)
                    .containsExactly(
                            new WorldChanged("village", subscription.id(), "player.gold", 60, 45, false, false));
            assertThat(village.get("player.gold")).isEqualTo(45);
            assertThat(village.get(null)).isEqualTo(Map.of("player", Map.of("gold", 45)));
            subscription.close();
            assertThat(village.set("player.gold", 1)).isGreaterThan(version);
            assertThat(village.set("player.name", "Ada")).isGreaterThan(version);
            assertThat(changes).hasSize(1);
        }
    }

    @Test
    void anNpcsWorldWriteReachesTheHostsSubscriptionDuringTheTurn() throws Exception {
        try (Oam oam = oam(
                "[{\"toolCalls\":[{\"name\":\"update_world_state\",\"arguments\":{\"path\":\"player.gold\",\"value\":\"15\"}}]},"
                        + npcReply("happy", "Here is your sword.") + "]")) {
            OamWorld village = oam.worlds().create("village", Map.of("player", Map.of("gold", 60)));
            List<WorldChanged> changes = new CopyOnWriteArrayList<>();
            List<NpcEvent> events = new CopyOnWriteArrayList<>();
            village.subscribe("player", change -> {
                changes.add(change);
                events.add(new NpcEvent.Line(new LineTracker.Event.LineReset("(world changed)"))); // marks the order
            });
            OamNpc gorm = oam.npcs()
                    .builder(Persona.named("Gorm"))
                    .world(village)
                    .options(NpcOptions.builder(Duration.ofSeconds(30))
                            .worldWritable(List.of("player.gold"))
                            .build())
                    .create();

            NpcReply reply = gorm.talk("One sword, please.", events::add).get(10, TimeUnit.SECONDS);

            assertThat(changes)
                    .extracting(WorldChanged::path, WorldChanged::oldValue, WorldChanged::newValue)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("player.gold", 60, 15));
            int started = events.indexOf(events.stream()
                    .filter(e -> e instanceof NpcEvent.ToolCallStarted)
                    .findFirst()
                    .orElseThrow());
            int marked = events.indexOf(new NpcEvent.Line(new LineTracker.Event.LineReset("(world changed)")));
            assertThat(marked).isGreaterThan(started); // the change arrived while the turn ran, in wire order
            assertThat(reply.toolCalls())
                    .singleElement()
                    .satisfies(r -> assertThat(r.isError()).isFalse());
            assertThat(village.get("player.gold")).isEqualTo(15);
        }
    }

    @Test
    void aDecisionComesBackTyped() throws Exception {
        try (Oam oam =
                oam("[{\"json\":{\"reasoning\":\"The knife is sharp.\",\"choice\":\"fight\",\"confidence\":80}}]")) {
            Decision decision = oam.decide(
                            "A wolf blocks the path.",
                            List.of(
                                    new DecisionOption("flee", "Run into the woods"),
                                    new DecisionOption("fight", "Draw the knife")))
                    .get(10, TimeUnit.SECONDS);

            assertThat(decision.optionID()).isEqualTo("fight");
            assertThat(decision.reasoning()).isEqualTo("The knife is sharp.");
            assertThat(decision.confidence()).isEqualTo(80);
            assertThat(decision.isFallback()).isFalse();
        }
    }

    @Test
    void linesOfRequestsSentToTheEngineDirectlyGoToTheHostsSink() throws Exception {
        ScriptedModel model = ScriptedModel.fromJson(
                Json.parse("{\"type\":\"scripted\",\"steps\":["
                        + "{\"toolCalls\":[{\"name\":\"wave\",\"arguments\":{}}]},{\"text\":\"Hi!\"}]}"),
                "model");
        List<String> others = new CopyOnWriteArrayList<>();
        Oam[] holder = new Oam[1];
        try (Oam oam =
                Oam.create(BridgeConfiguration.builder().systemModel(model).build(), line -> {
                    others.add(line);
                    if (line.contains("\"tool/call\"")) { // answered as a wire host answers
                        String id = line.replaceAll(".*\"id\":\"(t-[0-9]+)\".*", "$1");
                        holder[0]
                                .engine()
                                .receive("{\"jsonrpc\":\"2.0\",\"id\":\"" + id
                                        + "\",\"result\":{\"output\":\"waved\"}}");
                    }
                })) {
            holder[0] = oam;
            oam.engine()
                    .call(
                            "session/create",
                            Json.parse(
                                    "{\"session\":\"raw\",\"tools\":[{\"name\":\"wave\","
                                            + "\"description\":\"Waves.\",\"parameters\":{\"type\":\"object\",\"properties\":{}}}]}"))
                    .get(10, TimeUnit.SECONDS);

            var result = oam.engine()
                    .call("session/respond", Json.parse("{\"session\":\"raw\",\"prompt\":\"Hello\"}"))
                    .get(10, TimeUnit.SECONDS);

            assertThat(result.path("text").asText()).isEqualTo("Hi!");
            assertThat(result.path("toolCalls").get(0).path("output").asText()).isEqualTo("waved");
            assertThat(others).hasSize(1).allMatch(l -> l.contains("\"tool/call\""));
        }
    }

    @Test
    void wireErrorsArriveAsOamExceptionsWithTheirCode() throws Exception {
        try (Oam oam = oam("[]")) {
            OamSession session = oam.sessions().create();
            session.delete();
            assertThatThrownBy(() -> session.respond("Hello?").get(10, TimeUnit.SECONDS))
                    .isInstanceOf(ExecutionException.class)
                    .cause()
                    .isInstanceOf(OamException.class)
                    .satisfies(e -> {
                        OamException error = (OamException) e;
                        assertThat(error.code()).isEqualTo(-32020);
                        assertThat(error.dataCode()).isEqualTo("session_not_found");
                        assertThat(error.errorCode()).contains(ErrorCode.SESSION_NOT_FOUND);
                    });
            oam.npcs().builder(Persona.named("Gorm")).id("gorm").create();
            assertThatThrownBy(() ->
                            oam.npcs().builder(Persona.named("Gorm")).id("gorm").create())
                    .isInstanceOf(OamException.class)
                    .satisfies(e -> assertThat(((OamException) e).dataCode()).isEqualTo("npc_exists"))
                    .hasMessage("An NPC 'gorm' already exists.");
            assertThatThrownBy(() -> oam.worlds().create("village").get("player..gold"))
                    .isInstanceOf(OamException.class)
                    .satisfies(e -> assertThat(((OamException) e).dataCode()).isEqualTo("world_error"));
        }
    }
}
