package example;

import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.client.ClientTool;
import dev.oam.bridge.client.Oam;
import dev.oam.bridge.client.OamSession;
import dev.oam.bridge.client.SessionReply;
import dev.oam.core.model.ModelSpec;
import java.net.URI;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The README's Java example on a real model, as a user's program: a local GGUF file run in-process by
 * {@code oam-model-llama} (args[0]), then, with args[1], the same turn on an OpenAI-compatible server through
 * {@code oam-model-openai} (args[1] its base URL, args[2] its model name). Between the markers it is the README's
 * text.
 */
public final class RealModelExample {
    static final class Castle {
        final List<String> opened = new ArrayList<>();

        boolean openGate(String gate) {
            opened.add(gate);
            return true;
        }
    }

    public static void main(String[] args) throws Exception {
        Path gguf = Path.of(args[0]);
        Castle castle = new Castle();
        List<String> said = new ArrayList<>();
        run(new ModelSpec.Llama(gguf), castle, said);
        check(!said.get(0).isBlank(), "the llama model answered nothing");
        System.out.println("consumer: oam-model-llama ran " + gguf.getFileName() + " in this JVM: open_gate"
                + castle.opened + ", then: " + said.get(0));
        if (args.length > 2) {
            castle.opened.clear();
            run(new ModelSpec.OpenAI(URI.create(args[1]), args[2]), castle, said);
            check(!said.get(1).isBlank(), "the OpenAI-compatible server answered nothing");
            System.out.println("consumer: oam-model-openai ran " + args[2] + " at " + args[1] + ": open_gate"
                    + castle.opened + ", then: " + said.get(1));
        }
        Module module = Oam.class.getModule();
        System.out.println("consumer: the real models ran with oam"
                + (module.isNamed() ? " as the module " + module.getName() : " on the class path"));
    }

    static void run(ModelSpec model, Castle castle, List<String> said) {
        // README real begin
        BridgeConfiguration configuration = BridgeConfiguration.builder()
                .systemModel(model) // ModelSpec.Llama (oam-model-llama) or ModelSpec.OpenAI (oam-model-openai)
                .build();
        try (Oam oam = Oam.create(configuration)) {
            ClientTool openGate = ClientTool.of(
                    "open_gate",
                    "Opens one of the castle's gates.",
                    "{\"type\":\"object\",\"properties\":{\"gate\":{\"type\":\"string\","
                            + "\"enum\":[\"north\",\"south\",\"east\",\"west\"]}},\"required\":[\"gate\"]}",
                    call -> castle.openGate(call.string("gate", "")) ? "open" : "stuck");
            OamSession guard = oam.sessions().create("You are Ulric, a castle guard. Use tools to act.", openGate);
            SessionReply reply = guard.respond("Please open the east gate.").join();
            said.add(reply.text()); // the model's answer, after open_gate ran in this JVM
        }
        // README real end
    }

    private static void check(boolean condition, String what) {
        if (!condition) {
            throw new AssertionError(what);
        }
    }
}
