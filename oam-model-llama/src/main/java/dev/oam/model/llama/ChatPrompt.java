package dev.oam.model.llama;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.agent.ToolCallingMode;
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
 * The messages of one step, laid out so a small model reads the request last and the prompt cache hits where that
 * costs no quality:
 *
 * <ol>
 *   <li>{@code system}: instructions and context note only, byte-identical for every step and turn of a
 *       session (the context note changes only with {@code setContextNote} and compaction);
 *   <li>the visible entries: prompt → {@code user}; answer → {@code assistant} (text, or the JSON value);
 *       tool calls → {@code assistant} with exactly the text the grammar makes the model emit ({@link CallFormat});
 *       tool output → {@code tool}, as {@code Output of NAME: …};
 *   <li>the <em>step note</em>: this step's tools (name, description, arguments in words, {@link SchemaWords}),
 *       {@code respond_directly} when offered, how to call, and what to reply otherwise (plain words, or JSON of a
 *       described form on structured turns). On the turn's first step it ends the system message (or, without one,
 *       comes before the prompt in the last user message), so the request is the last thing the model reads before it
 *       answers: measured on SmolLM2-135M with {@code bench/run eval}, the listing after the request drew "Open the east
 *       gate" to the enum's first value, and of four tools the right one was chosen in 2 of 8 cases with the listing
 *       in the last message and 6 of 8 with it in the system message. After a tool round the note follows the tool
 *       output, with the reminder to answer in words from what the tools returned. The cost: the turn's second step
 *       reads the conversation again, since the system message lost the note.
 * </ol>
 *
 * <p>Later steps keep the note in the last message, so a step after a tool round re-reads only the note and the new
 * entries. The note never is a message of its own, so templates that insist on alternating roles still work. No
 * JSON Schema is ever shown: small models copy its words ({@code maxItems}, a property's description, a maximum)
 * into their values.
 *
 * <p>Every content is escaped against the engine's special tokens ({@link #escape}), so no text from a user, a
 * tool, the instructions or the history can open or close a message.
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
            boolean promptLast = !request.entries().isEmpty()
                    && request.entries().get(request.entries().size() - 1) instanceof TranscriptEntry.Prompt;
            if (promptLast && !messages.isEmpty() && messages.get(0).role().equals("system")) {
                messages.set(0, new ChatMessage("system", messages.get(0).content() + "\n\n" + note));
            } else if (last != null && last.role().equals("user") && promptLast) {
                messages.set(messages.size() - 1, new ChatMessage("user",
                        last.content().isEmpty() ? note : note + "\n\n" + last.content()));
            } else if (last != null && (last.role().equals("user") || last.role().equals("tool"))) {
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

    /** Calls in the format the grammar allows ({@link CallFormat}). */
    static String callsText(List<ToolCall> calls) {
        return CallFormat.text(calls);
    }

    /** What this step may produce; {@code null} for a plain answer step with nothing to remind. */
    static @Nullable String stepNote(ModelRequest request) {
        GenerationSchema schema = request.schema();
        boolean toolsRan = !request.turnToolOutputs().isEmpty();
        boolean tools = request.mode() != ToolCallingMode.DISALLOWED
                && (!request.tools().isEmpty() || request.offerRespondDirectly());
        String answer = schema != null ? (toolsRan ? "using what the tools returned, " : "") + "reply with only JSON in this form: "
                + jsonForm(schema.json())
                : toolsRan ? "reply in one or two short sentences of plain words, saying what happened." : null;
        if (!tools) {
            return answer == null ? null : toolsRan && schema == null ? "Now " + answer : capitalize(answer);
        }
        StringBuilder out = new StringBuilder("Tools you can call:");
        for (ToolDefinition tool : request.tools()) {
            out.append("\n- ").append(tool.name()).append(": ");
            if (tool.description() != null && !tool.description().isBlank()) {
                String description = tool.description().strip();
                out.append(description).append(description.endsWith(".") ? " " : ". ");
            }
            String arguments = arguments(tool.schema().json());
            out.append(arguments.isEmpty() ? "No arguments." : "Arguments: " + arguments + ".");
        }
        if (request.offerRespondDirectly()) {
            out.append("\n- ").append(ToolDefinition.RESPOND_DIRECTLY).append(": ")
                    .append(ToolDefinition.RESPOND_DIRECTLY_DESCRIPTION).append(" No arguments.");
        }
        out.append('\n').append(CallFormat.instruction(request.options().parallelToolCalls()))
                .append(" Take the values from the request.");
        if (request.mode() == ToolCallingMode.REQUIRED) {
            out.append(" Call a tool now.");
        } else {
            out.append(" Otherwise ").append(answer != null ? answer : "reply in plain words.");
        }
        return out.toString();
    }

    /** An object's arguments in words: {@code "gate": one of "north", "south"; "delay": a whole number}. */
    private static String arguments(ObjectNode schema) {
        return SchemaWords.members(schema, true).lines().map(line -> line.substring(2)).reduce((a, b) -> a + "; " + b).orElse("");
    }

    /** A structured answer's form: its skeleton, then one line per member. */
    private static String jsonForm(ObjectNode schema) {
        String members = SchemaWords.members(schema);
        return members.isEmpty() ? SchemaWords.value(schema, schema, 0) : SchemaWords.skeleton(schema) + "\n" + members;
    }

    private static String capitalize(String text) {
        return text.isEmpty() ? text : Character.toUpperCase(text.charAt(0)) + text.substring(1);
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
