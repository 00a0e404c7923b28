package dev.oam.cli;

import dev.oam.core.Log;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;

/**
 * The training run of oam.jar's AOT cache: {@code java -XX:AOTCacheOutput=oam.aot -cp oam.jar dev.oam.cli.AotTraining}
 * (JDK 25 and later; the oam-cli build and bin/release run it, and bin/oam passes {@code -XX:AOTCache} when the cache
 * is there and newer than the jar). The JVM records the classes this run loads and links, and a later start with the
 * cache maps them instead of reading, verifying and linking them again: a game that spawns {@code oam stdio} on every
 * launch gets its first answer sooner (bench/README.md, "startup").
 *
 * <p>It starts exactly as {@code oam stdio --model none} does (picocli, the stdout guard, the backends, the engine) and
 * plays the common requests of a game on scripted models: no model file, no network and no client tool, so the run is
 * the same on every machine. The protocol's answers are thrown away; end of input ends it.
 */
public final class AotTraining {
    /** Requests a game sends early on; every model is scripted. */
    static final String SCRIPT = """
            {"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1.0"}}
            {"jsonrpc":"2.0","id":2,"method":"ping"}
            {"jsonrpc":"2.0","id":3,"method":"model/availability"}
            {"jsonrpc":"2.0","id":4,"method":"session/create","params":{"session":"a","instructions":"Guard the gate.",\
            "model":{"type":"scripted","steps":[{"text":"Hello there.","chunks":2},{"json":{"choice":"open"}}]},\
            "tools":[{"name":"open_gate","description":"Opens a gate.","parameters":{"type":"object",\
            "properties":{"gate":{"type":"string"}},"required":["gate"]}}]}}
            {"jsonrpc":"2.0","id":5,"method":"session/respond","params":{"session":"a","prompt":"Hi.","stream":true,\
            "toolChoice":"none"}}
            {"jsonrpc":"2.0","id":6,"method":"session/respond","params":{"session":"a","prompt":"Open or close?",\
            "schema":{"type":"object","properties":{"choice":{"type":"string","enum":["open","close"]}},\
            "required":["choice"]}}}
            {"jsonrpc":"2.0","id":7,"method":"session/transcript","params":{"session":"a"}}
            {"jsonrpc":"2.0","id":8,"method":"npc/create","params":{"npc":"gorm","persona":{"name":"Gorm",\
            "role":"the village blacksmith"},"model":{"type":"scripted","steps":[{"json":{"emotion":"proud",\
            "line":"Fine steel, friend.","player_options":["Thanks.","Goodbye.","Tell me more."],\
            "ends_conversation":false},"chunks":3}]}}}
            {"jsonrpc":"2.0","id":9,"method":"npc/talk","params":{"npc":"gorm","line":"Hello.","stream":true}}
            {"jsonrpc":"2.0","id":10,"method":"world/create","params":{"world":"village","state":{"gold":10}}}
            {"jsonrpc":"2.0","id":11,"method":"world/set","params":{"world":"village","path":"gold","value":12}}
            {"jsonrpc":"2.0","id":12,"method":"decision/decide","params":{"situation":"A wolf growls.",\
            "options":["flee","fight"],"model":{"type":"scripted","steps":[{"json":{"reasoning":"It is too big.",\
            "choice":"flee","confidence":80}}]}}}
            """;

    private AotTraining() {}

    public static void main(String[] args) throws Exception {
        Log.toConsole();
        var parsed = Main.stdioCommandLine().parseArgs("--model", "none", "--log-level", "error");
        StdioCommand stdio = (StdioCommand) parsed.commandSpec().userObject();
        int code = stdio.run(new ByteArrayInputStream(SCRIPT.getBytes(StandardCharsets.UTF_8)), true);
        System.exit(code);
    }
}
