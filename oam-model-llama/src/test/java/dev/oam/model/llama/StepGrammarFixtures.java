package dev.oam.model.llama;

/** Grammars for the engine tests, written by the project's own grammar writer. */
final class StepGrammarFixtures {
    private StepGrammarFixtures() {}

    /** An object of {@code count} required string members named a, b, c, … of at most {@code maxString} characters. */
    static dev.oam.model.llama.grammar.Grammar objectOfStrings(int count, int maxString) throws Exception {
        StringBuilder properties = new StringBuilder();
        StringBuilder required = new StringBuilder();
        for (int i = 0; i < count; i++) {
            char name = (char) ('a' + i);
            properties.append(i == 0 ? "" : ",").append('"').append(name).append("\":{\"type\":\"string\"}");
            required.append(i == 0 ? "" : ",").append('"').append(name).append('"');
        }
        Gbnf gbnf = new Gbnf(maxString);
        dev.oam.model.llama.grammar.Term root = gbnf.schema((com.fasterxml.jackson.databind.node.ObjectNode)
                        dev.oam.core.json.Json.parse("{\"type\":\"object\",\"properties\":{" + properties
                                + "},\"required\":[" + required + "]}"))
                .root();
        return gbnf.build(root);
    }
}
