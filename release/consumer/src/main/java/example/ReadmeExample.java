package example;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.client.ClientTool;
import dev.oam.bridge.client.Oam;
import dev.oam.bridge.client.OamNpc;
import dev.oam.bridge.client.OamSession;
import dev.oam.bridge.client.OamWorld;
import dev.oam.bridge.client.SessionReply;
import dev.oam.bridge.client.Subscription;
import dev.oam.core.json.Json;
import dev.oam.core.model.ScriptedModel;
import dev.oam.game.decision.Decision;
import dev.oam.game.decision.DecisionOption;
import dev.oam.game.npc.NpcEvent;
import dev.oam.game.npc.NpcReply;
import dev.oam.game.npc.Persona;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** The README's "In-process (Java)" example as a user's program: between the markers it is the README's text. */
public final class ReadmeExample {
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

    public static void main(String[] args) throws Exception {
        ScriptedModel model = ScriptedModel.fromJson(Json.parse("{\"type\":\"scripted\",\"steps\":["
                + "{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{}}]},{\"text\":\"Come in.\"},"
                + "{\"json\":{\"emotion\":\"happy\",\"line\":\"Two axes left.\",\"player_options\":[],\"ends_conversation\":false}},"
                + "{\"json\":{\"reasoning\":\"Wolves fear fire.\",\"choice\":\"fight\",\"confidence\":70}}]}"), "model");
        BridgeConfiguration configuration = BridgeConfiguration.builder().systemModel(model).build();
        Castle castle = new Castle();
        Hud hud = new Hud();
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
        check(castle.opened == 1, "open_gate ran once: " + castle.opened);
        check(castle.wolf.equals("fight"), "the decision: " + castle.wolf);
        check(hud.said.equals(List.of("Come in.", "Two axes left.")), "what the HUD said: " + hud.said);
        check(!hud.shown.isEmpty() && Integer.valueOf(45).equals(hud.shown.get(hud.shown.size() - 1)), "gold 45: " + hud.shown);
        Module module = Oam.class.getModule();
        System.out.println("consumer: the README example ran against " + Oam.class.getProtectionDomain().getCodeSource().getLocation()
                + (module.isNamed() ? " as the module " + module.getName() : " on the class path"));
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }
}
