package dev.oam.model.llama.prompt;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The messages of one step, laid out so that each step's prompt begins with the whole prompt of the step before (what
 * an engine's prompt cache reuses), and a small model reads the tools before the request:
 *
 * <ol>
 *   <li>{@code system}: instructions and context note, then the <em>session note</em> ({@link #sessionNote}): every
 *       tool the turn could call (name, description, arguments in words, {@link SchemaWords}), how to call one, and the
 *       answer's form (plain words, or JSON of a described form on structured turns). It is the same in every step of a
 *       turn, whether or not the step may call a tool, and in every turn with the same tools and form (an NPC's turns),
 *       so a turn reads again only what the conversation added. It belongs there and not after the request: a small
 *       model reads a listing that follows the request as part of it (an argument drawn to the first enum value shown,
 *       the wrong one of several tools), which {@code bench/run eval} shows;
 *   <li>the visible entries: prompt → {@code user}; answer → {@code assistant} (text, or the JSON value); tool calls →
 *       {@code assistant} with exactly the text the grammar makes the model emit ({@link CallFormat}); tool output →
 *       {@code tool}, as {@code Output of NAME: …};
 *   <li>the <em>directive</em> ({@link #directive}), a sentence only where a step needs one: on a step that may call or
 *       answer, that it may answer in plain words when no tool fits; on a forced step offering
 *       {@code respond_directly}, how to answer without a tool (both before the request, so that the request is the
 *       last thing read: after it, SmolLM2 read the sentence back instead of calling a fitting tool); after a tool
 *       round, at the end of the tool output, the reminder to answer from what the tools returned (without it SmolLM2
 *       answered with the call again). A plain forced step gets none: its grammar allows only a call, and words asking
 *       for one ("Call a tool now.") did not help a small model pick the right tool. The next step no longer shows the
 *       directive, so only that message and what follows are read again.
 * </ol>
 *
 * <p>The notes never are a message of their own, so templates that insist on alternating roles still work. No JSON
 * Schema is ever shown: small models copy its words ({@code maxItems}, a property's description, a maximum) into their
 * values.
 *
 * <p>Every content is escaped against the engine's special tokens ({@link #escape}), so no text from a user, a tool,
 * the instructions or the history can open or close a message.
 */
public final class ChatPrompt {
    private static final char ZERO_WIDTH_SPACE = '\u200B';

    private ChatPrompt() {}

    /** The step's messages, escaped. */
    public static List<ChatMessage> messages(ModelRequest request, Set<String> controlTokens) {
        List<ChatMessage> messages = new ArrayList<>();
        String system = join(system(request.instructions(), request.contextNote()), sessionNote(request));
        if (system != null) {
            messages.add(new ChatMessage("system", system));
        }
        DialogueAnswer dialogue = DialogueAnswer.of(request);
        for (TranscriptEntry entry : request.entries()) {
            messages.add(message(entry, dialogue));
        }
        String directive = directive(request);
        if (directive != null) {
            ChatMessage last = messages.isEmpty() ? null : messages.get(messages.size() - 1);
            boolean promptLast = !request.entries().isEmpty()
                    && request.entries().get(request.entries().size() - 1) instanceof TranscriptEntry.Prompt;
            if (promptLast && last != null && last.role().equals("user")) {
                // Before the request, so the request is the last thing read. After it, SmolLM2-135M read the
                // sentence back as its answer instead of calling the tool that fits (issue 37: -32012 "only read its
                // prompt back" on every retry, bench/eval/v3 cases f01 and f04).
                messages.set(
                        messages.size() - 1,
                        new ChatMessage(
                                "user", last.content().isEmpty() ? directive : directive + "\n\n" + last.content()));
            } else if (last != null
                    && (last.role().equals("user") || last.role().equals("tool"))) {
                messages.set(
                        messages.size() - 1,
                        new ChatMessage(
                                last.role(),
                                last.content().isEmpty() ? directive : last.content() + "\n\n" + directive));
            } else {
                messages.add(new ChatMessage("user", directive));
            }
        }
        return escapeAll(messages, controlTokens);
    }

    /** One entry as the prompt shows it, escaped (for exact token counts). */
    public static ChatMessage entry(TranscriptEntry entry, Set<String> controlTokens) {
        return escapeAll(List.of(message(entry)), controlTokens).get(0);
    }

    private static List<ChatMessage> escapeAll(List<ChatMessage> messages, Set<String> controlTokens) {
        List<ChatMessage> out = new ArrayList<>(messages.size());
        for (ChatMessage message : messages) {
            out.add(new ChatMessage(message.role(), escape(message.content(), controlTokens)));
        }
        return out;
    }

    public static @Nullable String system(@Nullable String instructions, @Nullable String contextNote) {
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
        return message(entry, null);
    }

    /** One entry; a structured answer of {@code dialogue}'s form as dialogue. */
    static ChatMessage message(TranscriptEntry entry, @Nullable DialogueAnswer dialogue) {
        return switch (entry) {
            case TranscriptEntry.Prompt prompt -> new ChatMessage("user", prompt.text());
            // A structured answer as the grammar made the model write it (the transcript keeps compact JSON), so the
            // engine's cache of the tokens it generated still matches on the next turn.
            case TranscriptEntry.Response response ->
                new ChatMessage(
                        "assistant",
                        response.structured() == null
                                ? response.text()
                                : dialogue != null && dialogue.text(response.structured()) instanceof String line
                                        ? line
                                        : CallFormat.spaced(response.structured()));
            case TranscriptEntry.ToolCalls calls -> new ChatMessage("assistant", callsText(calls.calls()));
            case TranscriptEntry.ToolOutput output ->
                new ChatMessage("tool", "Output of " + output.toolName() + ": " + output.text());
        };
    }

    /** Calls in the format the grammar allows ({@link CallFormat}). */
    static String callsText(List<ToolCall> calls) {
        return CallFormat.text(calls);
    }

    /**
     * What the system message says after the instructions, the same in every step of a turn and in every turn that has
     * the same tools and answer form: the turn's tools (every one it could call, {@link ModelRequest#listedTools},
     * whether or not this step may), how to call one, and the answer's form. {@code null} when there is nothing to say.
     */
    static @Nullable String sessionNote(ModelRequest request) {
        GenerationSchema schema = request.schema();
        List<ToolDefinition> listed = request.listedTools();
        DialogueAnswer dialogue = DialogueAnswer.of(request);
        String form = dialogue != null
                ? dialogue.instructions()
                : schema != null ? "reply with only JSON in this form: " + jsonForm(schema.json()) : null;
        if (listed.isEmpty()) {
            return form == null ? null : capitalize(form);
        }
        // The answer's form first, the tools last: a tool step reads the listing right before the request (with the
        // form between them SmolLM2-135M wrote the form's words into a tool's arguments).
        StringBuilder out = new StringBuilder();
        if (form != null) {
            out.append(dialogue != null ? form : "When you answer, " + form).append("\n\n");
        }
        out.append("Tools you can call:");
        for (ToolDefinition tool : listed) {
            out.append("\n- ").append(tool.name()).append(": ");
            if (tool.description() != null && !tool.description().isBlank()) {
                String description = tool.description().strip();
                out.append(description).append(description.endsWith(".") ? " " : ". ");
            }
            String arguments = arguments(tool.schema().json());
            out.append(arguments.isEmpty() ? "No arguments." : "Arguments: " + arguments + ".");
        }
        out.append('\n')
                .append(CallFormat.instruction(request.options().parallelToolCalls()))
                .append(" Take the values from the request.");
        return out.toString();
    }

    /**
     * What only this step is told, at the end of its last message: to call a tool now (a forced step, with
     * {@code respond_directly} when offered), or after a tool round to answer from what the tools returned. Short, so
     * that the next step, which no longer shows it, reads again only the few tokens after it.
     */
    static @Nullable String directive(ModelRequest request) {
        boolean toolsRan = !request.turnToolOutputs().isEmpty();
        if (request.mode() == ToolCallingMode.REQUIRED) {
            // A forced step's grammar allows only a call, so it needs no words of its own (see the class comment).
            return request.offerRespondDirectly()
                    ? "Call a tool now, or " + ToolDefinition.RESPOND_DIRECTLY + " ("
                            + ToolDefinition.RESPOND_DIRECTLY_DESCRIPTION.strip() + ") to answer without one."
                    : null;
        }
        if (request.offerRespondDirectly()) {
            return "To answer without a tool, call " + ToolDefinition.RESPOND_DIRECTLY + " ("
                    + ToolDefinition.RESPOND_DIRECTLY_DESCRIPTION.strip() + ").";
        }
        if (!toolsRan) {
            return request.mode() == ToolCallingMode.ALLOWED && request.schema() == null
                    ? "If no tool fits the request, reply in plain words."
                    : null;
        }
        DialogueAnswer dialogue = DialogueAnswer.of(request);
        if (dialogue != null && request.mode() == ToolCallingMode.DISALLOWED) {
            // The grammar can only write the character's line: no words needed, and none that the next turn's prompt
            // lacks, so the engine's cache still holds the step's prompt and the reply on the next turn.
            return null;
        }
        String answer = dialogue != null
                ? dialogue.afterTools()
                : request.schema() != null
                        ? "Now reply with the JSON, using what the tools returned."
                        : "Now reply in one or two short sentences of plain words, saying what happened.";
        return request.mode() == ToolCallingMode.ALLOWED
                ? "Call another tool only if you still need one. " + answer
                : answer;
    }

    /** Everything the bridge adds to the model's prompt for this step (the session note and the directive). */
    public static @Nullable String stepNote(ModelRequest request) {
        return join(sessionNote(request), directive(request));
    }

    private static @Nullable String join(@Nullable String first, @Nullable String second) {
        return first == null ? second : second == null ? first : first + "\n\n" + second;
    }

    /** An object's arguments in words: {@code "gate": one of "north", "south"; "delay": a whole number}. */
    private static String arguments(ObjectNode schema) {
        return SchemaWords.members(schema, true)
                .lines()
                .map(line -> line.substring(2))
                .reduce((a, b) -> a + "; " + b)
                .orElse("");
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
     * {@code text} with every occurrence of a special token that could open or close a message broken by a zero-width
     * space after its first character, repeated until none remains (a break can never create a new occurrence of a
     * token that does not itself contain U+200B).
     *
     * <p>Only tokens of at least two characters with something besides white space in them are broken. The others
     * cannot frame a message, and vocabularies use them for ordinary text: Gemma's vocabulary holds {@code \n},
     * {@code \n\n}, runs of spaces and tabs as user-defined tokens, which the tokenizer matches wherever they occur,
     * exactly as in training. Breaking them would change what the model reads (a newline is not a token that can be
     * broken), so they pass unchanged.
     */
    public static String escape(String text, Set<String> controlTokens) {
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
