package dev.oam.model.llama;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.ToolCallingMode;
import dev.oam.core.json.Json;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The messages of one step, laid out so the prompt cache hits:
 *
 * <ol>
 *   <li>{@code system}: instructions and context note only, byte-identical for every step and turn of a
 *       session (the context note changes only with {@code setContextNote} and compaction);
 *   <li>the visible entries: prompt → {@code user}; answer → {@code assistant} (text, or the compact JSON);
 *       tool calls → {@code assistant} with exactly the text the grammar makes the model emit
 *       ({@code {"tool_calls":[…]}}); tool output → {@code tool}, as {@code Output of NAME: …};
 *   <li>the <em>step note</em>, appended to the last message: this step's tools (name, description,
 *       parameters' generation schema), {@code respond_directly} when offered, the reply format, and the
 *       answer's schema on structured turns.
 * </ol>
 *
 * <p>Tools, {@code respond_directly} and the mode change from step to step (a named tool on the first
 * step only, {@code respond_directly} on the first step only, no tools once the rounds are used up), so
 * they live at the end: a step re-reads the note and the new entries, never the conversation. Had they
 * been in the system message, every such change would re-evaluate the whole history. The note goes into
 * the last message (not a message of its own) so templates that insist on alternating roles still work.
 *
 * <p>Every content is escaped against the engine's control tokens ({@link #escape}), so no text from a
 * user, a tool, the instructions or the history can open or close a message.
 */
final class ChatPrompt {
    private static final char ZERO_WIDTH_SPACE = '\u200B';

    private ChatPrompt() {}

    /** The step's messages, escaped. */
    static List<ChatMessage> messages(ModelRequest request, Set<String> controlTokens) {
        List<ChatMessage> messages = new ArrayList<>();
        String system = system(request.instructions(), request.contextNote());
        if (system != null) {
            messages.add(new ChatMessage("system", system));
        }
        for (TranscriptEntry entry : request.entries()) {
            messages.add(message(entry));
        }
        String note = stepNote(request);
        if (note != null) {
            ChatMessage last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
            if (last != null && (last.role().equals("user") || last.role().equals("tool"))) {
                messages.set(messages.size() - 1, new ChatMessage(last.role(),
                        last.content().isEmpty() ? note : last.content() + "\n\n" + note));
            } else {
                messages.add(new ChatMessage("user", note));
            }
        }
        return escapeAll(messages, controlTokens);
    }

    /** One entry as the prompt shows it, escaped (for exact token counts). */
    static ChatMessage entry(TranscriptEntry entry, Set<String> controlTokens) {
        return escapeAll(List.of(message(entry)), controlTokens).get(0);
    }

    private static List<ChatMessage> escapeAll(List<ChatMessage> messages, Set<String> controlTokens) {
        List<ChatMessage> out = new ArrayList<>(messages.size());
        for (ChatMessage message : messages) {
            out.add(new ChatMessage(message.role(), escape(message.content(), controlTokens)));
        }
        return out;
    }

    static @Nullable String system(@Nullable String instructions, @Nullable String contextNote) {
        List<String> parts = new ArrayList<>();
        if (instructions != null && !instructions.isBlank()) {
            parts.add(instructions.strip());
        }
        if (contextNote != null && !contextNote.isBlank()) {
            parts.add(contextNote.strip());
        }
        return parts.isEmpty() ? null : String.join("\n\n", parts);
    }

    static ChatMessage message(TranscriptEntry entry) {
        return switch (entry) {
            case TranscriptEntry.Prompt prompt -> new ChatMessage("user", prompt.text());
            case TranscriptEntry.Response response -> new ChatMessage("assistant", response.text());
            case TranscriptEntry.ToolCalls calls -> new ChatMessage("assistant", callsText(calls.calls()));
            case TranscriptEntry.ToolOutput output -> new ChatMessage("tool", "Output of " + output.toolName() + ": " + output.text());
        };
    }

    /** Calls in the one format the grammar allows: {@code {"tool_calls":[{"name":…,"arguments":{…}}]}}. */
    static String callsText(List<ToolCall> calls) {
        ObjectNode root = Json.object();
        ArrayNode array = root.putArray("tool_calls");
        for (ToolCall call : calls) {
            ObjectNode item = array.addObject();
            item.put("name", call.name());
            item.set("arguments", call.arguments());
        }
        return Json.write(root);
    }

    /** What this step may produce; {@code null} for a plain answer step. */
    static @Nullable String stepNote(ModelRequest request) {
        GenerationSchema schema = request.schema();
        boolean tools = request.mode() != ToolCallingMode.DISALLOWED
                && (!request.tools().isEmpty() || request.offerRespondDirectly());
        if (!tools) {
            return schema == null ? null : "Answer with only a JSON value that follows this JSON Schema: " + Json.write(schema.json());
        }
        StringBuilder out = new StringBuilder(ToolDefinition.promptListing(request.tools(), request.offerRespondDirectly(),
                "Parameters:"));
        out.append("\nTo call tools, reply with only {\"tool_calls\":[{\"name\":\"<tool>\",\"arguments\":{…}}]}.");
        if (request.mode() == ToolCallingMode.REQUIRED) {
            out.append(" Call a tool now.");
        } else if (schema == null) {
            out.append(" Otherwise answer in plain text.");
        } else {
            out.append(" Otherwise answer with only a JSON value that follows this JSON Schema: ").append(Json.write(schema.json()));
        }
        return out.toString();
    }

    /**
     * {@code text} with every occurrence of a special token that could open or close a message broken by a
     * zero-width space after its first character, repeated until none remains (a break can never create a new
     * occurrence of a token that does not itself contain U+200B).
     *
     * <p>Only tokens of at least two characters with something besides white space in them are broken. The
     * others cannot frame a message, and vocabularies use them for ordinary text: Gemma's vocabulary holds
     * {@code \n}, {@code \n\n}, runs of spaces and tabs as user-defined tokens, which the tokenizer matches
     * wherever they occur, exactly as in training. Breaking them would change what the model reads (a newline
     * is not a token that can be broken), so they pass unchanged.
     */
    static String escape(String text, Set<String> controlTokens) {
        String out = text;
        boolean changed = true;
        for (int pass = 0; changed && pass < 16; pass++) {
            changed = false;
            for (String token : controlTokens) {
                if (!canFrame(token) || !out.contains(token)) {
                    continue;
                }
                changed = true;
                int first = Character.charCount(token.codePointAt(0));
                out = out.replace(token, token.substring(0, first) + ZERO_WIDTH_SPACE + token.substring(first));
            }
        }
        return out;
    }

    /** Whether {@code token} is one escaping must break: two characters or more, not all white space or U+200B. */
    static boolean canFrame(String token) {
        if (token.codePointCount(0, token.length()) < 2) {
            return false;
        }
        return token.codePoints().anyMatch(cp -> !Character.isWhitespace(cp) && cp != ZERO_WIDTH_SPACE);
    }
}
