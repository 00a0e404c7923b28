package dev.oam.bridge.game;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.BridgeConfiguration;
import dev.oam.bridge.BridgeEngine;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code npc/create} and {@code npc/restore} answer each odd request exactly so: which id, which warnings in which
 * order, which error naming which parameter. The two read the same things from different places (the params, or a saved
 * state with each present param winning); this pins what each reads where.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NpcCreateRestoreTest {
    private static final String TOOL = "{'name':'check_inventory','parameters':{'type':'object','properties':{}}}";

    /**
     * Runs {@code method params} requests ({@code '} for {@code "} in the params) on one engine and returns one line
     * per response: the result, or {@code error} and the error; an {@code npc/state} result as {@code state} and the
     * parts a create or restore sets.
     */
    private static List<String> run(String... requests) throws Exception {
        List<String> out = new ArrayList<>();
        try (BridgeEngine engine =
                new BridgeEngine(BridgeConfiguration.builder().build(), line -> {})) {
            for (String request : requests) {
                int space = request.indexOf(' ');
                String method = request.substring(0, space);
                ObjectNode message = Json.object();
                message.put("method", method);
                message.set("params", Json.parse(request.substring(space + 1).replace('\'', '"')));
                ObjectNode response = engine.callMessage(message).get(10, TimeUnit.SECONDS);
                JsonNode error = response.get("error");
                if (error != null) {
                    out.add("error " + Json.write(error));
                } else if (method.equals("npc/state")) {
                    out.add("state "
                            + Json.write(stateParts(response.path("result").path("state"))));
                } else {
                    out.add(Json.write(response.get("result")));
                }
            }
        }
        return out;
    }

    private static ObjectNode stateParts(JsonNode state) {
        ObjectNode parts = Json.object();
        parts.set("npc", state.get("npc"));
        parts.set("persona", state.path("persona").get("name"));
        parts.set("memory", state.get("memory"));
        parts.set("replyFormat", state.path("options").get("replyFormat"));
        parts.set("memoryTools", state.path("options").get("memoryTools"));
        parts.set("tools", Json.strings(state.path("tools").findValuesAsText("name")));
        parts.set("world", state.get("world"));
        return parts;
    }

    private static List<String> lines(String text) {
        return text.lines().toList();
    }

    @Test
    void createReadsItsParams() throws Exception {
        assertThat(run(
                        "npc/create {'npc':'a','persona':{'name':'A'},'model':'scripted'}",
                        "npc/create {'persona':{'name':'B'},'model':'scripted'}",
                        "npc/create {'npc':null,'persona':{'name':'C'},'model':'scripted'}",
                        "npc/create {'npc':'d','persona':{'name':'D','mood':1},'options':{'colour':1},'extra':true,"
                                + "'state':{},'model':'scripted'}",
                        "npc/create {'npc':'a','persona':{'name':'A'},'model':'scripted'}",
                        "npc/create {'npc':'e','model':'scripted'}",
                        "npc/create {'npc':'e','persona':[],'model':'scripted'}",
                        "npc/create {'npc':'','persona':{'name':'E'},'model':'scripted'}",
                        "npc/create {'npc':'e','persona':{'name':'E'},'world':'nowhere','model':'scripted'}",
                        "npc/create {'npc':'e','persona':{'name':'E'},'memory':{'relationship':101},'model':'scripted'}",
                        "npc/create {'npc':'e','persona':{'name':'E'},'memory':[],'model':'scripted'}",
                        "npc/create {'npc':'e','persona':{'name':'E'},'tools':[" + TOOL + "],"
                                + "'options':{'groundingTool':'look'},'model':'scripted'}",
                        "npc/create {'npc':'e','persona':{'name':'E'},'tools':{},'model':'scripted'}",
                        "npc/create {'npc':'e','persona':{'name':'E'},"
                                + "'tools':[{'name':'remember_fact','parameters':{'type':'object'}}],'model':'scripted'}",
                        "npc/create {'npc':'e','persona':{'name':'E'},'memory':{'relationship':12.5,'facts':['f']},"
                                + "'tools':[" + TOOL + "],'options':{'memoryTools':'all','replyFormat':'text'},"
                                + "'model':'scripted'}",
                        "npc/state {'npc':'e'}",
                        "world/create {'world':'w','state':{}}",
                        "npc/create {'npc':'f','persona':{'name':'F'},'world':'w','model':'scripted'}",
                        "npc/state {'npc':'f'}"))
                .containsExactlyElementsOf(lines("""
                        {"npc":"a","tools":[],"warnings":[]}
                        {"npc":"npc1","tools":[],"warnings":[]}
                        {"npc":"npc2","tools":[],"warnings":[]}
                        {"npc":"d","tools":[],"warnings":["Unknown parameter 'extra' was ignored.","Unknown parameter 'state' was ignored.","Unknown parameter 'persona.mood' was ignored.","Unknown parameter 'options.colour' was ignored."]}
                        error {"code":-32051,"message":"An NPC 'a' already exists.","data":{"code":"npc_exists","npc":"a"}}
                        error {"code":-32602,"message":"Missing required parameter 'persona'.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'persona' must be an object.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'npc' must be 1–128 printable characters.","data":{"code":"invalid_params"}}
                        error {"code":-32052,"message":"No world 'nowhere'.","data":{"code":"world_not_found","world":"nowhere"}}
                        error {"code":-32602,"message":"Parameter 'memory.relationship' must be a number from -100 to 100.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'memory' must be an object {facts, relationship, summary}.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'options.groundingTool' names 'look', which is not one of the NPC's tools (check_inventory).","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'tools' must be an array of tool definitions.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'tools': the name 'remember_fact' belongs to a built-in NPC tool.","data":{"code":"invalid_params"}}
                        {"npc":"e","tools":["check_inventory","remember_fact","change_relationship"],"warnings":["check_inventory: the tool has no description; the model decides from the description when to call a tool, so say what it does and what it returns."]}
                        state {"npc":"e","persona":"E","memory":{"facts":["f"],"relationship":13},"replyFormat":"text","memoryTools":["rememberFact","changeRelationship"],"tools":["check_inventory"],"world":null}
                        {"world":"w","version":0}
                        {"npc":"f","tools":["read_world_state"],"warnings":[]}
                        state {"npc":"f","persona":"F","memory":{"facts":[],"relationship":0},"replyFormat":"automatic","memoryTools":[],"tools":[],"world":"w"}"""));
    }

    /**
     * A save as {@code npc/state} writes it, with unknown keys in its persona and options; {@code extra} adds members.
     */
    private static String saved(String npc, String extra) {
        return "{'version':1,'persona':{'name':'S','mood':'x'},'memory':{'facts':['f'],'relationship':5},"
                + "'transcript':{'type':'FoundationModels.Transcript','version':'1.1','transcript':{'entries':[]}},"
                + "'npc':" + npc + ",'options':{'replyFormat':'text','colour':1},'tools':[" + TOOL + "],'world':'w'"
                + extra + "}";
    }

    @Test
    void restoreReadsTheSaveWithEachPresentParamWinning() throws Exception {
        String s = saved("'s'", "");
        assertThat(run(
                        "world/create {'world':'w','state':{}}",
                        "npc/restore {'state':" + s + ",'model':'scripted'}",
                        "npc/state {'npc':'s'}",
                        "npc/restore {'state':" + s + ",'model':'scripted'}",
                        "npc/restore {'state':{'npc':'x','state':" + s + "},'npc':'s3'}",
                        "npc/restore {'state':" + s + ",'npc':null}",
                        "npc/restore {'state':" + saved("5", "") + "}",
                        "npc/restore {'state':" + s + ",'npc':'s5','persona':{'name':'P'},'memory':{},"
                                + "'options':{'colour':2},'tools':null,'world':null,'extra':1}",
                        "npc/state {'npc':'s5'}",
                        "npc/restore {'state':" + s + ",'npc':'s6','options':null,'tools':[]}",
                        "npc/state {'npc':'s6'}",
                        "world/delete {'world':'w'}",
                        "npc/restore {'state':" + s + ",'npc':'s7'}",
                        "npc/restore {'state':" + s + ",'npc':'s8','world':'w'}",
                        "npc/restore {'state':" + saved("'s9'", ",'tools':{}") + "}",
                        "npc/restore {'state':" + s + ",'npc':'s9','tools':{}}",
                        "npc/restore {}",
                        "npc/restore {'state':[]}",
                        "npc/restore {'state':{'version':1}}",
                        "npc/restore {'state':" + saved("'s9'", ",'transcript':{'x':1}") + "}",
                        "npc/restore {'state':" + saved("'s9'", ",'memory':[]") + "}",
                        "npc/restore {'state':" + saved("'s9'", ",'persona':{'name':1}") + "}",
                        "npc/restore {'state':" + saved("'s9'", ",'options':{'maxFacts':-1}") + "}",
                        "npc/restore {'state':" + s + ",'npc':'s9','options':{'maxFacts':-1}}",
                        "npc/restore {'state':" + saved("'s9'", ",'options':[]") + "}",
                        "npc/state {'npc':'s9'}"))
                .containsExactlyElementsOf(lines("""
                        {"world":"w","version":0}
                        {"npc":"s","tools":["check_inventory","read_world_state"],"warnings":["check_inventory: the tool has no description; the model decides from the description when to call a tool, so say what it does and what it returns."]}
                        state {"npc":"s","persona":"S","memory":{"facts":["f"],"relationship":5},"replyFormat":"text","memoryTools":[],"tools":["check_inventory"],"world":"w"}
                        error {"code":-32051,"message":"An NPC 's' already exists.","data":{"code":"npc_exists","npc":"s"}}
                        {"npc":"s3","tools":["check_inventory","read_world_state"],"warnings":["check_inventory: the tool has no description; the model decides from the description when to call a tool, so say what it does and what it returns."]}
                        {"npc":"npc1","tools":["check_inventory","read_world_state"],"warnings":["check_inventory: the tool has no description; the model decides from the description when to call a tool, so say what it does and what it returns."]}
                        {"npc":"npc2","tools":["check_inventory","read_world_state"],"warnings":["check_inventory: the tool has no description; the model decides from the description when to call a tool, so say what it does and what it returns."]}
                        {"npc":"s5","tools":[],"warnings":["Unknown parameter 'persona' was ignored.","Unknown parameter 'memory' was ignored.","Unknown parameter 'extra' was ignored.","Unknown parameter 'options.colour' was ignored."]}
                        state {"npc":"s5","persona":"S","memory":{"facts":["f"],"relationship":5},"replyFormat":"automatic","memoryTools":[],"tools":[],"world":null}
                        {"npc":"s6","tools":["read_world_state"],"warnings":[]}
                        state {"npc":"s6","persona":"S","memory":{"facts":["f"],"relationship":5},"replyFormat":"automatic","memoryTools":[],"tools":[],"world":"w"}
                        {"world":"w","deleted":true,"endedSubscriptions":0}
                        {"npc":"s7","tools":["check_inventory"],"warnings":["check_inventory: the tool has no description; the model decides from the description when to call a tool, so say what it does and what it returns.","The saved world 'w' no longer exists; the NPC was restored without it."]}
                        error {"code":-32052,"message":"No world 'w'.","data":{"code":"world_not_found","world":"w"}}
                        error {"code":-32602,"message":"Parameter 'state.tools' must be an array of tool definitions.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'tools' must be an array of tool definitions.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Missing required parameter 'state'.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'state' must be an NPC save state from npc/state.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'state' must be an NPC save state from npc/state.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'state.transcript.entries' must be an array of transcript entries.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'state.memory' must be an object {facts, relationship, summary}.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'state.persona.name' must be a string.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'state.options.maxFacts' must be an integer ≥ 0.","data":{"code":"invalid_params"}}
                        error {"code":-32602,"message":"Parameter 'options.maxFacts' must be an integer ≥ 0.","data":{"code":"invalid_params"}}
                        {"npc":"s9","tools":["check_inventory"],"warnings":["check_inventory: the tool has no description; the model decides from the description when to call a tool, so say what it does and what it returns.","The saved world 'w' no longer exists; the NPC was restored without it."]}
                        state {"npc":"s9","persona":"S","memory":{"facts":["f"],"relationship":5},"replyFormat":"automatic","memoryTools":[],"tools":["check_inventory"],"world":null}"""));
    }
}
