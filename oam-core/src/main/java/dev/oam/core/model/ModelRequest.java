package dev.oam.core.model;

import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Everything one model step sees.
 *
 * @param entries the visible conversation, ending with this turn's prompt and the turn's tool rounds so far
 * @param tools the tools enabled for this step (empty when {@code mode} is disallowed)
 * @param offerRespondDirectly whether the hidden {@code respond_directly} tool is offered too
 * @param schema the generation schema of the answer for structured turns
 * @param inputTokens the agent's count of this request's input tokens (what {@code usage.inputTokens} reports for
 *     models that do not count themselves)
 * @param attempt 1 for the first generation of this step, 2 and up when the agent asks again because the output was
 *     invalid or the model failed (a sampling model should not repeat the same draw)
 * @param listedTools every tool the turn could call (the session's, less those {@code enabledTools} leaves out),
 *     whatever this step may call: a prompt that lists them identically in every step and turn keeps its prefix, so an
 *     engine with a prompt cache reads only what each step adds
 */
public record ModelRequest(
        @Nullable String instructions,
        @Nullable String contextNote,
        List<TranscriptEntry> entries,
        List<ToolDefinition> tools,
        ToolCallingMode mode,
        boolean offerRespondDirectly,
        @Nullable GenerationSchema schema,
        GenerationOptions options,
        int inputTokens,
        int attempt,
        List<ToolDefinition> listedTools) {

    public ModelRequest {
        entries = List.copyOf(entries);
        tools = List.copyOf(tools);
        listedTools = List.copyOf(listedTools);
        if (attempt < 1) {
            throw new IllegalArgumentException("attempt must be at least 1");
        }
    }

    /** A step whose listed tools are the tools it may call. */
    public ModelRequest(
            @Nullable String instructions,
            @Nullable String contextNote,
            List<TranscriptEntry> entries,
            List<ToolDefinition> tools,
            ToolCallingMode mode,
            boolean offerRespondDirectly,
            @Nullable GenerationSchema schema,
            GenerationOptions options,
            int inputTokens,
            int attempt) {
        this(
                instructions,
                contextNote,
                entries,
                tools,
                mode,
                offerRespondDirectly,
                schema,
                options,
                inputTokens,
                attempt,
                tools);
    }

    /** A first attempt. */
    public ModelRequest(
            @Nullable String instructions,
            @Nullable String contextNote,
            List<TranscriptEntry> entries,
            List<ToolDefinition> tools,
            ToolCallingMode mode,
            boolean offerRespondDirectly,
            @Nullable GenerationSchema schema,
            GenerationOptions options,
            int inputTokens) {
        this(instructions, contextNote, entries, tools, mode, offerRespondDirectly, schema, options, inputTokens, 1);
    }

    /** The same step asked again. */
    public ModelRequest withAttempt(int number) {
        return new ModelRequest(
                instructions,
                contextNote,
                entries,
                tools,
                mode,
                offerRespondDirectly,
                schema,
                options,
                inputTokens,
                number,
                listedTools);
    }

    /** The same step with another answer schema (a game method holding the model to floors of its own). */
    public ModelRequest withSchema(@Nullable GenerationSchema other) {
        return new ModelRequest(
                instructions,
                contextNote,
                entries,
                tools,
                mode,
                offerRespondDirectly,
                other,
                options,
                inputTokens,
                attempt,
                listedTools);
    }

    /** The same step with other generation settings. */
    public ModelRequest withOptions(GenerationOptions other) {
        return new ModelRequest(
                instructions,
                contextNote,
                entries,
                tools,
                mode,
                offerRespondDirectly,
                schema,
                other,
                inputTokens,
                attempt,
                listedTools);
    }

    /**
     * The same step allowed to call only {@code callable} (a subset of {@link #tools}); with none left it may not call
     * at all. The listed tools stay, so the prompt's tool listing, and what an engine cached of it, is unchanged.
     */
    public ModelRequest withCallable(List<ToolDefinition> callable) {
        ToolCallingMode m = callable.isEmpty() ? ToolCallingMode.DISALLOWED : mode;
        return new ModelRequest(
                instructions,
                contextNote,
                entries,
                callable,
                m,
                m != ToolCallingMode.DISALLOWED && offerRespondDirectly,
                schema,
                options,
                inputTokens,
                attempt,
                listedTools);
    }

    /** The names of the tools whose output this turn already holds, in the order they answered. */
    public List<String> turnToolNames() {
        return turnOutputs().stream().map(TranscriptEntry.ToolOutput::toolName).toList();
    }

    /** A request whose input tokens are estimated with {@link Tokens}. */
    public ModelRequest(
            @Nullable String instructions,
            @Nullable String contextNote,
            List<TranscriptEntry> entries,
            List<ToolDefinition> tools,
            ToolCallingMode mode,
            boolean offerRespondDirectly,
            @Nullable GenerationSchema schema,
            GenerationOptions options) {
        this(instructions, contextNote, entries, tools, mode, offerRespondDirectly, schema, options, -1);
    }

    /** {@link #inputTokens} when the agent counted them, else the {@link Tokens} estimate. */
    public int estimatedInputTokens() {
        return inputTokens >= 0 ? inputTokens : Tokens.estimate(this);
    }

    /** The text of this turn's prompt ("" when there is none). */
    public String prompt() {
        for (int i = entries.size() - 1; i >= 0; i--) {
            if (entries.get(i) instanceof TranscriptEntry.Prompt prompt) {
                return prompt.text();
            }
        }
        return "";
    }

    /** This turn's tool outputs as the model saw them, oldest first. */
    public List<String> turnToolOutputs() {
        return turnOutputs().stream().map(TranscriptEntry.ToolOutput::text).toList();
    }

    /** The tool outputs after this turn's prompt, oldest first. */
    private List<TranscriptEntry.ToolOutput> turnOutputs() {
        List<TranscriptEntry.ToolOutput> outputs = new ArrayList<>();
        for (int i = entries.size() - 1; i >= 0; i--) {
            TranscriptEntry entry = entries.get(i);
            if (entry instanceof TranscriptEntry.Prompt) {
                break;
            }
            if (entry instanceof TranscriptEntry.ToolOutput output) {
                outputs.add(0, output);
            }
        }
        return outputs;
    }
}
