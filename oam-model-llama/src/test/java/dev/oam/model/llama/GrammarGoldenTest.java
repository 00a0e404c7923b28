package dev.oam.model.llama;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The GBNF text of every grammar of {@link GrammarCorpus} is exactly the recorded text: llama.cpp sees the same
 * grammars byte for byte. {@code OAM_GOLDEN_WRITE=1} records the corpus again (into src/test/resources).
 */
class GrammarGoldenTest {
    private static final String RESOURCE = "grammar-golden.gbnf";
    private static final String HEADER = "#### ";

    @Test
    void everyGrammarPrintsAsRecorded() throws Exception {
        Map<String, String> actual = new LinkedHashMap<>();
        GrammarCorpus.grammars().forEach((name, grammar) -> actual.put(name, grammar.gbnf()));
        StringBuilder out = new StringBuilder();
        actual.forEach(
                (name, text) -> out.append(HEADER).append(name).append('\n').append(text));
        Files.writeString(Path.of("target/" + RESOURCE), out, StandardCharsets.UTF_8);
        if ("1".equals(System.getenv("OAM_GOLDEN_WRITE"))) {
            Files.writeString(
                    Path.of("src/test/resources/dev/oam/model/llama/" + RESOURCE), out, StandardCharsets.UTF_8);
        }
        Map<String, String> expected = recorded();
        assertThat(actual.keySet()).containsExactlyElementsOf(expected.keySet());
        actual.forEach((name, text) -> assertThat(text).as(name).isEqualTo(expected.get(name)));
    }

    /** The recorded grammars by name. */
    static Map<String, String> recorded() throws IOException {
        String all;
        try (InputStream in = GrammarGoldenTest.class.getResourceAsStream(RESOURCE)) {
            assertThat(in).as(RESOURCE).isNotNull();
            all = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        Map<String, String> out = new LinkedHashMap<>();
        String name = null;
        StringBuilder text = new StringBuilder();
        for (String line : all.split("\n")) {
            if (line.startsWith(HEADER)) {
                if (name != null) {
                    out.put(name, text.toString());
                }
                name = line.substring(HEADER.length());
                text.setLength(0);
            } else if (name != null) {
                text.append(line).append('\n');
            }
        }
        if (name != null) {
            out.put(name, text.toString());
        }
        return out;
    }
}
