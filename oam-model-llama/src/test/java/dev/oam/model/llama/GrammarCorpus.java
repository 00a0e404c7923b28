package dev.oam.model.llama;

import static dev.oam.model.llama.Fixtures.CHECK_INVENTORY;
import static dev.oam.model.llama.Fixtures.OPEN_GATE;
import static dev.oam.model.llama.Fixtures.prompt;
import static dev.oam.model.llama.Fixtures.request;
import static dev.oam.model.llama.Fixtures.tool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.DialogueForm;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.model.llama.grammar.Grammar;
import dev.oam.model.llama.grammar.Term;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Grammars of every shape the writers make, by name: each JSON-schema form {@link Gbnf} translates at a few string
 * bounds, and step grammars (calls single, parallel, forced and optional, respond-directly, answers as text, JSON and
 * dialogue).
 */
public final class GrammarCorpus {
    /** Schemas by name, as clients write them (each is converted to a generation schema first). */
    static final Map<String, String> SCHEMAS = schemas();

    private static final ToolDefinition FILL_FORM = tool("fill_form", "Fills a form.", """
            {"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"},"c":{"type":"string"},
             "d":{"type":"array","items":{"type":"string"}}},"required":["a","b","c","d"]}""");
    private static final ToolDefinition GIVE_ITEM = tool("give_item", "Gives the player an item.", """
            {"type":"object","properties":{"item":{"type":"string"},"count":{"type":"integer","minimum":1,"maximum":20}},
             "required":["item","count"]}""");
    private static final String REPLY_SCHEMA = """
            {"type": "object", "properties": {
              "emotion": {"type": "string", "enum": ["neutral", "happy", "angry"]},
              "line": {"type": "string"},
              "player_options": {"type": "array", "items": {"type": "string", "minLength": 12},
                                 "minItems": 3, "maxItems": 3},
              "ends_conversation": {"type": "boolean"}},
             "required": ["emotion", "line", "player_options", "ends_conversation"], "additionalProperties": false}""";
    private static final String LOOSE_REPLY_SCHEMA = """
            {"type": "object", "properties": {
              "line": {"type": "string"},
              "player_options": {"type": "array", "items": {"type": "string"}, "maxItems": 2}},
             "required": ["line"]}""";
    private static final GenerationOptions PARALLEL = new GenerationOptions(null, null, null, true);

    private GrammarCorpus() {}

    private static Map<String, String> schemas() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("mixed-required", """
                {"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"},
                 "d":{"type":"null"}},"required":["a","c"],"additionalProperties":false}""");
        s.put("all-optional", """
                {"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"},"c":{"type":"integer"}}}""");
        s.put("empty-object", "{\"type\":\"object\",\"properties\":{}}");
        s.put("decision", Fixtures.DECISION);
        s.put("string", "{\"type\":\"string\"}");
        s.put("string-lengths", """
                {"type":"object","properties":{"a":{"type":"string","minLength":3},"b":{"type":"string","minLength":50},
                 "c":{"type":"string","maxLength":0},"d":{"type":"string","minLength":2,"maxLength":5}},
                 "required":["a","b","c","d"],"additionalProperties":false}""");
        s.put("integer", "{\"type\":\"integer\"}");
        s.put("number-min0", "{\"type\":\"number\",\"minimum\":0}");
        s.put("integer-max-1", "{\"type\":\"integer\",\"maximum\":-1}");
        s.put("integer-min-only", "{\"type\":\"integer\",\"minimum\":3}");
        s.put("integer-0-100", "{\"type\":\"integer\",\"minimum\":0,\"maximum\":100}");
        s.put("integer-7-7", "{\"type\":\"integer\",\"minimum\":7,\"maximum\":7}");
        s.put("integer-wide", "{\"type\":\"integer\",\"minimum\":0,\"maximum\":100000}");
        s.put("integer-negative-wide", "{\"type\":\"integer\",\"minimum\":-100000,\"maximum\":250}");
        s.put("integer-all-negative", "{\"type\":\"integer\",\"minimum\":-4321,\"maximum\":-17}");
        s.put("integer-odd", "{\"type\":\"integer\",\"minimum\":1234,\"maximum\":987654}");
        s.put("integer-fractional-bounds", "{\"type\":\"integer\",\"minimum\":1.5,\"maximum\":9.5}");
        s.put("integer-huge", "{\"type\":\"integer\",\"minimum\":-1e20,\"maximum\":1e20}");
        s.put("number-2-30", "{\"type\":\"number\",\"minimum\":2,\"maximum\":30}");
        s.put("number-minus1-1", "{\"type\":\"number\",\"minimum\":-1,\"maximum\":1}");
        s.put("number-0-1", "{\"type\":\"number\",\"minimum\":0,\"maximum\":1}");
        s.put("number-0-300", "{\"type\":\"number\",\"minimum\":0,\"maximum\":300}");
        s.put("number-fraction", "{\"type\":\"number\",\"minimum\":0.5,\"maximum\":2.25}");
        s.put("array-1-3", "{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":1,\"maxItems\":3}");
        s.put("array-default", "{\"type\":\"array\",\"items\":{\"type\":\"boolean\"}}");
        s.put("array-none", "{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"maxItems\":0}");
        s.put("array-0-1", "{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":1}");
        s.put("array-0-2", "{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"maxItems\":2}");
        s.put("array-2-2", "{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":2,\"maxItems\":2}");
        s.put("array-1-1", "{\"type\":\"array\",\"items\":{\"type\":\"string\"},\"minItems\":1,\"maxItems\":1}");
        s.put("array-many", "{\"type\":\"array\",\"items\":{\"type\":\"integer\"},\"minItems\":40}");
        s.put("array-any", "{\"type\":\"array\"}");
        s.put("nullable", "{\"type\":[\"string\",\"null\"]}");
        s.put("any-of", """
                {"anyOf":[{"type":"integer","minimum":0,"maximum":3},{"type":"string","maxLength":4},{"type":"null"},
                 {"type":"integer","minimum":0,"maximum":3}]}""");
        s.put("recursive", """
                {"$defs":{"Node":{"type":"object","properties":{"name":{"type":"string"},
                  "children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["name"]}},
                 "$ref":"#/$defs/Node"}""");
        s.put("anything", "{\"type\":\"object\",\"properties\":{\"extra\":{}},\"required\":[\"extra\"]}");
        s.put(
                "enum-escapes",
                "{\"type\":\"string\",\"enum\":[\"say \\\"hi\\\"\",\"back\\\\slash\",\"café\",\"🐉\",\"two\\nlines\","
                        + "\"tab\\there\",\"\\u007f\"]}");
        s.put("enum-mixed", "{\"enum\":[1,\"one\",true,null,2.5,{\"a\":[1]}]}");
        s.put("boolean", "{\"type\":\"boolean\"}");
        s.put("null", "{\"type\":\"null\"}");
        s.put("key-escapes", """
                {"type":"object","properties":{"say \\"hi\\"":{"type":"string"},"dé":{"type":"integer"}},
                 "required":["say \\"hi\\""]}""");
        s.put("nested", """
                {"type":"object","properties":{"inner":{"type":"object","properties":{"x":{"type":"number"},
                 "y":{"type":"array","items":{"type":"object","properties":{"k":{"type":"string","enum":["a","b"]}}}}},
                 "required":["x"]},"tags":{"type":"array","items":{"type":"string","maxLength":10},"maxItems":3}},
                 "required":["inner","tags"]}""");
        s.put("optional-between-required", """
                {"type":"object","properties":{"a":{"type":"string"},"b":{"type":"integer"},"c":{"type":"boolean"},
                 "d":{"type":"integer"},"e":{"type":"string"}},"required":["a","c","e"]}""");
        s.put("reply", REPLY_SCHEMA);
        return s;
    }

    /** Every grammar of the corpus by name, in a stable order. */
    public static Map<String, Grammar> grammars() throws Exception {
        Map<String, Grammar> out = new LinkedHashMap<>();
        for (Map.Entry<String, String> schema : SCHEMAS.entrySet()) {
            for (int maxString : new int[] {1, 8, 32, 64}) {
                Gbnf gbnf = new Gbnf(maxString);
                Term root = gbnf.schema(converted(schema.getValue()).json()).root();
                if (root != null) {
                    out.put("schema " + schema.getKey() + " " + maxString, gbnf.build(root));
                }
            }
            Gbnf raw = new Gbnf(16);
            Term root = raw.schema((ObjectNode) Json.parse(schema.getValue())).root();
            if (root != null) {
                out.put("raw schema " + schema.getKey(), raw.build(root));
            }
        }
        List<ToolDefinition> tools = List.of(OPEN_GATE, CHECK_INVENTORY, GIVE_ITEM, FILL_FORM);
        for (ToolCallingMode mode : ToolCallingMode.values()) {
            for (boolean direct : new boolean[] {false, true}) {
                for (String answer : new String[] {"text", "decision", "reply"}) {
                    GenerationSchema schema = answer.equals("text")
                            ? null
                            : converted(answer.equals("decision") ? Fixtures.DECISION : REPLY_SCHEMA);
                    for (int count = 1; count <= tools.size(); count++) {
                        if (mode == ToolCallingMode.DISALLOWED && (count > 1 || direct)) {
                            continue;
                        }
                        List<ToolDefinition> offered = tools.subList(0, count);
                        String name = "step " + mode + (direct ? " direct" : "") + " " + answer + " tools=" + count;
                        ModelRequest single = request(prompt("Go."), offered, mode, direct, schema);
                        out.put(name + " 64", StepGrammar.of(single, 64));
                        out.put(name + " 5", StepGrammar.of(single, 5));
                        ModelRequest parallel = request(prompt("Go."), offered, mode, direct, schema, PARALLEL);
                        out.put(name + " parallel", StepGrammar.of(parallel, 64));
                        out.put(name + " parallel max 2", StepGrammar.of(parallel, 12, 2));
                    }
                }
            }
        }
        for (ToolCallingMode mode : ToolCallingMode.values()) {
            for (int sentences = 1; sentences <= 3; sentences++) {
                dialogue(out, mode, "reply", converted(REPLY_SCHEMA), sentences);
                dialogue(out, mode, "loose", converted(LOOSE_REPLY_SCHEMA), sentences);
                dialogue(out, mode, "text", null, sentences);
            }
        }
        for (int budget : new int[] {64, 256, 600, 1024, 4000}) {
            ModelRequest step = request(
                    prompt("Fill it."),
                    List.of(FILL_FORM, OPEN_GATE),
                    ToolCallingMode.REQUIRED,
                    false,
                    null,
                    new GenerationOptions(null, budget, null, true));
            for (int context : new int[] {512, 8192}) {
                for (boolean closes : new boolean[] {false, true}) {
                    Grammar grammar =
                            LlamaLanguageModel.plan(step, context, closes).grammar();
                    if (grammar != null) {
                        out.put("plan " + budget + " context " + context + (closes ? " closes" : ""), grammar);
                    }
                }
            }
        }
        return out;
    }

    private static void dialogue(
            Map<String, Grammar> out,
            ToolCallingMode mode,
            String name,
            @Nullable GenerationSchema schema,
            int sentences)
            throws Exception {
        for (String speaker : new String[] {"Gorm", "Zoë \"the Quiet\""}) {
            ModelRequest plain = request(prompt("Hi."), List.of(OPEN_GATE), mode, false, schema);
            ModelRequest spoken =
                    plain.withOptions(plain.options().withDialogue(new DialogueForm(speaker, "Player", sentences)));
            out.put("dialogue " + mode + " " + name + " " + sentences + " " + speaker, StepGrammar.of(spoken, 64));
        }
    }

    private static GenerationSchema converted(String json) throws Exception {
        return GenerationSchema.convert(Json.parse(json), "Response");
    }
}
