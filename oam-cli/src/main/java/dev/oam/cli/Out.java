package dev.oam.cli;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Output helpers: indented JSON, and UTF-8 print streams over the standard streams. */
final class Out {
    private static final DefaultPrettyPrinter PRETTY = new DefaultPrettyPrinter(
                    com.fasterxml.jackson.core.util.Separators.createDefaultInstance()
                            .withObjectFieldValueSpacing(com.fasterxml.jackson.core.util.Separators.Spacing.AFTER))
            .withObjectIndenter(new DefaultIndenter("  ", "\n"))
            .withArrayIndenter(new DefaultIndenter("  ", "\n"));

    private Out() {}

    static String pretty(JsonNode node) {
        try {
            return Json.mapper().writer(PRETTY).writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    static PrintStream stdout() {
        return new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, StandardCharsets.UTF_8);
    }

    static PrintStream stderr() {
        return new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.err), true, StandardCharsets.UTF_8);
    }
}
