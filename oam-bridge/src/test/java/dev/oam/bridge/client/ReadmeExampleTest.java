package dev.oam.bridge.client;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.core.json.Json;
import dev.oam.core.model.ScriptedModel;
import dev.oam.game.decision.Decision;
import dev.oam.game.decision.DecisionOption;
import dev.oam.game.npc.NpcEvent;
import dev.oam.game.npc.NpcReply;
import dev.oam.game.npc.Persona;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The README's "In-process (Java)" example, run as written (on a scripted system model), and kept identical to it. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReadmeExampleTest {
    /** The game objects the example talks to. */
    static final class Castle {
        int opened;
        String wolf = "";

        boolean openGate() {
            opened++;
            return true;
        }

        void meetWolf(String option) {
            wolf = option;
        }
    }

    static final class Hud {
        final List<Object> shown = new ArrayList<>();
        final List<String> said = new ArrayList<>();

        void say(String text) {
            said.add(text);
        }

        void show(NpcEvent event) {
            shown.add(event);
        }

        void gold(Object value) {
            shown.add(value);
        }
    }

    @SuppressWarnings("try") // the README's subscription is held only for its scope
    @Test
    void theExampleRuns() throws Exception {
        ScriptedModel model = ScriptedModel.fromJson(
                Json.parse("{\"type\":\"scripted\",\"steps\":["
                        + "{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{}}]},{\"text\":\"Come in.\"},"
                        + "{\"json\":{\"emotion\":\"happy\",\"line\":\"Two axes left.\",\"player_options\":[],\"ends_conversation\":false}},"
                        + "{\"json\":{\"reasoning\":\"Wolves fear fire.\",\"choice\":\"fight\",\"confidence\":70}}]}"),
                "model");
        BridgeConfiguration configuration =
                BridgeConfiguration.builder().systemModel(model).build();
        Castle castle = new Castle();
        Hud hud = new Hud();
        // spotless:off (the README's layout, aligned comments included)
        // README begin
        try (Oam oam = Oam.create(configuration)) {
            ClientTool openGate = ClientTool.of("open_gate", "Opens the castle gate.", call -> castle.openGate() ? "open" : "stuck");
            OamSession guard = oam.sessions().create("You guard the castle gate.", openGate);
            SessionReply reply = guard.respond("Let me in, please.").join();      // open_gate ran in this JVM
            hud.say(reply.text());

            OamNpc gorm = oam.npcs().create(Persona.builder("Gorm").role("the village blacksmith").build());
            NpcReply line = gorm.talk("Any axes?", event -> hud.show(event)).join();  // emotion, line deltas, tool calls
            hud.say(line.line());

            OamWorld village = oam.worlds().create("village", Map.of("player", Map.of("gold", 60)));
            try (Subscription gold = village.subscribe("player.gold", change -> hud.gold(change.newValue()))) {
                village.set("player.gold", 45);                                   // hud.gold(45) ran before set returned
            }
            Decision choice = oam.decide("A wolf blocks the path.", List.of(DecisionOption.of("flee"), DecisionOption.of("fight")))
                    .join();
            castle.meetWolf(choice.optionID());
        }
        // README end
        // spotless:on
        assertThat(castle.opened).isEqualTo(1);
        assertThat(castle.wolf).isEqualTo("fight");
        assertThat(hud.said).containsExactly("Come in.", "Two axes left.");
        assertThat(hud.shown).isNotEmpty().last().isEqualTo(45);
        assertThat(hud.shown).hasAtLeastOneElementOfType(NpcEvent.Line.class);
    }

    @Test
    void theReadmeShowsThisCode() throws Exception {
        List<String> source = Files.readAllLines(Path.of("src/test/java/dev/oam/bridge/client/ReadmeExampleTest.java"));
        int begin = source.indexOf("        // README begin");
        int end = source.indexOf("        // README end");
        assertThat(begin).isPositive();
        assertThat(end).isGreaterThan(begin + 1);
        StringBuilder block = new StringBuilder();
        for (String text : source.subList(begin + 1, end)) {
            block.append(text.length() >= 8 ? text.substring(8) : text.strip()).append('\n');
        }
        assertThat(Files.readString(Path.of("../README.md"))).contains(block.toString());
    }
}
