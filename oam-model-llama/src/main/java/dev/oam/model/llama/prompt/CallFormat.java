package dev.oam.model.llama.prompt;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The one format of tool calls on the embedded engine, as the grammar makes the model write it, as the prompt describes
 * it and as the history shows earlier calls: plain JSON with a space after each colon and comma (the way JSON is
 * usually printed in the text small models learn from), one call per step unless the session allows parallel calls:
 *
 * <pre>
 * {"tool_call": {"name": "open_gate", "arguments": {"gate": "east"}}}
 * {"tool_calls": [{"name": "open_gate", "arguments": {"gate": "east"}}, {"name": "…", "arguments": {…}}]}
 * </pre>
 *
 * The same shape as llama.cpp's server uses for models without a native tool-call format; the Berkeley Function Calling
 * Leaderboard's format study found plain JSON calls far better than wrapper tags for small models.
 */
public final class CallFormat {
    public static final String SINGLE = "{\"tool_call\": ";
    public static final String PARALLEL = "{\"tool_calls\": [";
    public static final String NAME = "{\"name\": ";
    public static final String ARGUMENTS = ", \"arguments\": ";
    private static final Pattern CALLS_START = Pattern.compile("^\\{\\s*\"tool_calls?\"\\s*:");

    private CallFormat() {}

    /** The calls as the model would have written them. */
    static String text(List<ToolCall> calls) {
        List<String> items = new ArrayList<>();
        for (ToolCall call : calls) {
            items.add(NAME + spaced(Json.mapper().getNodeFactory().textNode(call.name())) + ARGUMENTS
                    + spaced(call.arguments()) + "}");
        }
        return items.size() == 1 ? SINGLE + items.get(0) + "}" : PARALLEL + String.join(", ", items) + "]}";
    }

    /** How to call, for the prompt. */
    static String instruction(boolean parallel) {
        return parallel
                ? "To call tools, reply with only {\"tool_calls\": [{\"name\": \"<tool>\", \"arguments\": "
                        + "{…}}]} (one or more calls)."
                : "To call a tool, reply with only {\"tool_call\": {\"name\": \"<tool>\", \"arguments\": {…}}}.";
    }

    /** Whether {@code text} (leading white space allowed) is, or begins like, a tool call. */
    public static boolean looksLikeCalls(String text) {
        return CALLS_START.matcher(text.stripLeading()).find();
    }

    /** Whether {@code sofar} (no leading white space) may still become a call as more is generated. */
    public static boolean mayBecomeCalls(String sofar) {
        return SINGLE.startsWith(sofar) || PARALLEL.startsWith(sofar);
    }

    /** {@code value} as JSON with {@code ": "} and {@code ", "} between members and items, as the grammar writes it. */
    static String spaced(JsonNode value) {
        StringBuilder out = new StringBuilder();
        write(value, out);
        return out.toString();
    }

    private static void write(JsonNode value, StringBuilder out) {
        if (value.isObject()) {
            out.append('{');
            boolean first = true;
            for (Iterator<Map.Entry<String, JsonNode>> it = value.properties().iterator(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> member = it.next();
                out.append(first ? "" : ", ")
                        .append(Json.write(Json.mapper().getNodeFactory().textNode(member.getKey())))
                        .append(": ");
                write(member.getValue(), out);
                first = false;
            }
            out.append('}');
        } else if (value.isArray()) {
            out.append('[');
            for (int i = 0; i < value.size(); i++) {
                out.append(i == 0 ? "" : ", ");
                write(value.get(i), out);
            }
            out.append(']');
        } else {
            out.append(Json.write(value));
        }
    }
}
