package dev.oam.model.openai;

import java.util.Locale;
import java.util.Optional;

/**
 * How tool calls are obtained from a server.
 *
 * <ul>
 *   <li>{@code native}: {@code tools} and {@code tool_choice} as OpenAI defines them; the server is trusted, except
 *       that a forced step it answers without a call fails retryably (never an answer where a call was forced).
 *   <li>{@code emulated}: no {@code tools} at all; every step that may call a tool asks for {@code response_format:
 *       json_schema} of the allowed calls and turns the JSON into calls.
 *   <li>{@code auto} (default): native, falling back to emulation where the endpoint proves unreliable (a forced step
 *       without a call, tools rejected), remembered for the endpoint.
 * </ul>
 */
enum ToolCallMode {
    NATIVE,
    EMULATED,
    AUTO;

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    static Optional<ToolCallMode> parse(String text) {
        for (ToolCallMode mode : values()) {
            if (mode.wireName().equals(text)) {
                return Optional.of(mode);
            }
        }
        return Optional.empty();
    }
}
