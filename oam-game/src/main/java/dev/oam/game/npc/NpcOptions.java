package dev.oam.game.npc;

import dev.oam.core.agent.ToolChoice;
import dev.oam.core.model.Sampling;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * An NPC's options (docs/GAMES.md, "Persona and options"), with their defaults in {@link #defaults(Duration)}.
 *
 * @param secretsUnlockAtRelationship {@code null}: secrets always in the prompt with a rule to guard them
 */
public record NpcOptions(
        ReplyFormat replyFormat,
        @Nullable String groundingTool,
        ToolChoice toolChoice,
        int maxToolRounds,
        int maxToolCalls,
        Duration toolTimeout,
        List<String> worldReadable,
        List<String> worldWritable,
        List<String> worldContextPaths,
        boolean rememberFact,
        boolean changeRelationship,
        int maxFacts,
        int maxRelationshipChange,
        @Nullable Integer secretsUnlockAtRelationship,
        List<Emotion> emotions,
        int playerOptionCount,
        boolean canEndConversation,
        @Nullable String extraInstructions,
        int compactAfterTurns,
        int keepRecentTurns,
        boolean fallbackOnGuardrail,
        List<String> fallbackLines,
        @Nullable Double temperature,
        @Nullable Integer maximumResponseTokens,
        int barkMaximumTokens,
        @Nullable Sampling sampling) {

    /** The fallback lines spoken when {@code fallbackLines} gives none. */
    public static final List<String> DEFAULT_FALLBACK_LINES =
            List.of("Let's talk about something else.", "I'd rather not speak of that.", "Hmm. Ask me something else.");

    /** The default tool budget of a turn: rounds of tool calls, then calls in all. */
    public static final int DEFAULT_MAX_TOOL_ROUNDS = 2;

    public static final int DEFAULT_MAX_TOOL_CALLS = 6;

    /** The default of {@code worldReadable}: the root path, so {@code read_world_state} may read the whole world. */
    public static final List<String> WHOLE_WORLD = List.of("");

    /** The default count of facts memory keeps (the oldest go first). */
    public static final int DEFAULT_MAX_FACTS = 12;

    /** The default of the most one {@code change_relationship} call may move the relationship. */
    public static final int DEFAULT_MAX_RELATIONSHIP_CHANGE = 10;

    /** The default relationship from which secrets enter the instructions. */
    public static final int DEFAULT_SECRETS_UNLOCK_AT_RELATIONSHIP = 50;

    /** The default count of suggested player replies, and the most a reply may have. */
    public static final int DEFAULT_PLAYER_OPTION_COUNT = 3;

    public static final int MAX_PLAYER_OPTIONS = 4;

    /** By default the conversation is compacted once it holds this many turns, keeping the most recent ones. */
    public static final int DEFAULT_COMPACT_AFTER_TURNS = 8;

    public static final int DEFAULT_KEEP_RECENT_TURNS = 2;

    /** The default token limit of a bark (one sentence). */
    public static final int DEFAULT_BARK_MAXIMUM_TOKENS = 48;

    public NpcOptions {
        worldReadable = List.copyOf(worldReadable);
        worldWritable = List.copyOf(worldWritable);
        worldContextPaths = List.copyOf(worldContextPaths);
        emotions = List.copyOf(emotions);
        fallbackLines = List.copyOf(fallbackLines);
    }

    /**
     * Every option at its default (docs/GAMES.md, "Persona and options"), with the host's tool timeout. The builder's
     * defaults constructor names each option with its value.
     */
    public static NpcOptions defaults(Duration toolTimeout) {
        return new Builder(toolTimeout).build();
    }

    /** A builder starting from {@link #defaults(Duration)}. */
    public static Builder builder(Duration toolTimeout) {
        return new Builder(toolTimeout);
    }

    /** The fallback pool: the configured lines (trimmed, empties dropped) or the defaults. */
    public List<String> fallbackPool() {
        List<String> pool = fallbackLines.stream()
                .map(String::strip)
                .filter(s -> !s.isEmpty())
                .toList();
        return pool.isEmpty() ? DEFAULT_FALLBACK_LINES : pool;
    }

    /** {@code playerOptionCount} clamped to 0–{@link #MAX_PLAYER_OPTIONS}. */
    public int optionCount() {
        return Math.max(0, Math.min(MAX_PLAYER_OPTIONS, playerOptionCount));
    }

    /** A builder starting from these values. */
    public Builder toBuilder() {
        return new Builder(this);
    }

    /**
     * Sets options by name instead of by position: {@code NpcOptions.builder(timeout).playerOptionCount(2)
     * .rememberFact(true).build()}, starting from {@link #defaults(Duration)} (or {@link #toBuilder()} of any options).
     */
    public static final class Builder {
        private ReplyFormat replyFormat;
        private @Nullable String groundingTool;
        private ToolChoice toolChoice;
        private int maxToolRounds;
        private int maxToolCalls;
        private Duration toolTimeout;
        private List<String> worldReadable;
        private List<String> worldWritable;
        private List<String> worldContextPaths;
        private boolean rememberFact;
        private boolean changeRelationship;
        private int maxFacts;
        private int maxRelationshipChange;
        private @Nullable Integer secretsUnlockAtRelationship;
        private List<Emotion> emotions;
        private int playerOptionCount;
        private boolean canEndConversation;
        private @Nullable String extraInstructions;
        private int compactAfterTurns;
        private int keepRecentTurns;
        private boolean fallbackOnGuardrail;
        private List<String> fallbackLines;
        private @Nullable Double temperature;
        private @Nullable Integer maximumResponseTokens;
        private int barkMaximumTokens;
        private @Nullable Sampling sampling;

        /** The defaults: each option by name with its default value. */
        private Builder(Duration toolTimeout) {
            this.replyFormat = ReplyFormat.AUTOMATIC;
            this.groundingTool = null;
            this.toolChoice = ToolChoice.EXPLICIT;
            this.maxToolRounds = DEFAULT_MAX_TOOL_ROUNDS;
            this.maxToolCalls = DEFAULT_MAX_TOOL_CALLS;
            this.toolTimeout = toolTimeout;
            this.worldReadable = WHOLE_WORLD;
            this.worldWritable = List.of();
            this.worldContextPaths = List.of();
            this.rememberFact = false; // no memory tools unless asked for
            this.changeRelationship = false;
            this.maxFacts = DEFAULT_MAX_FACTS;
            this.maxRelationshipChange = DEFAULT_MAX_RELATIONSHIP_CHANGE;
            this.secretsUnlockAtRelationship = DEFAULT_SECRETS_UNLOCK_AT_RELATIONSHIP;
            this.emotions = List.of(Emotion.values());
            this.playerOptionCount = DEFAULT_PLAYER_OPTION_COUNT;
            this.canEndConversation = true;
            this.extraInstructions = null;
            this.compactAfterTurns = DEFAULT_COMPACT_AFTER_TURNS;
            this.keepRecentTurns = DEFAULT_KEEP_RECENT_TURNS;
            this.fallbackOnGuardrail = true;
            this.fallbackLines = List.of(); // the pool is then DEFAULT_FALLBACK_LINES
            this.temperature = null; // null: the model's
            this.maximumResponseTokens = null;
            this.barkMaximumTokens = DEFAULT_BARK_MAXIMUM_TOKENS;
            this.sampling = null;
        }

        private Builder(NpcOptions from) {
            this.replyFormat = from.replyFormat();
            this.groundingTool = from.groundingTool();
            this.toolChoice = from.toolChoice();
            this.maxToolRounds = from.maxToolRounds();
            this.maxToolCalls = from.maxToolCalls();
            this.toolTimeout = from.toolTimeout();
            this.worldReadable = from.worldReadable();
            this.worldWritable = from.worldWritable();
            this.worldContextPaths = from.worldContextPaths();
            this.rememberFact = from.rememberFact();
            this.changeRelationship = from.changeRelationship();
            this.maxFacts = from.maxFacts();
            this.maxRelationshipChange = from.maxRelationshipChange();
            this.secretsUnlockAtRelationship = from.secretsUnlockAtRelationship();
            this.emotions = from.emotions();
            this.playerOptionCount = from.playerOptionCount();
            this.canEndConversation = from.canEndConversation();
            this.extraInstructions = from.extraInstructions();
            this.compactAfterTurns = from.compactAfterTurns();
            this.keepRecentTurns = from.keepRecentTurns();
            this.fallbackOnGuardrail = from.fallbackOnGuardrail();
            this.fallbackLines = from.fallbackLines();
            this.temperature = from.temperature();
            this.maximumResponseTokens = from.maximumResponseTokens();
            this.barkMaximumTokens = from.barkMaximumTokens();
            this.sampling = from.sampling();
        }

        public Builder replyFormat(ReplyFormat replyFormat) {
            this.replyFormat = replyFormat;
            return this;
        }

        public Builder groundingTool(@Nullable String groundingTool) {
            this.groundingTool = groundingTool;
            return this;
        }

        public Builder toolChoice(ToolChoice toolChoice) {
            this.toolChoice = toolChoice;
            return this;
        }

        public Builder maxToolRounds(int maxToolRounds) {
            this.maxToolRounds = maxToolRounds;
            return this;
        }

        public Builder maxToolCalls(int maxToolCalls) {
            this.maxToolCalls = maxToolCalls;
            return this;
        }

        public Builder toolTimeout(Duration toolTimeout) {
            this.toolTimeout = toolTimeout;
            return this;
        }

        public Builder worldReadable(List<String> worldReadable) {
            this.worldReadable = worldReadable;
            return this;
        }

        public Builder worldWritable(List<String> worldWritable) {
            this.worldWritable = worldWritable;
            return this;
        }

        public Builder worldContextPaths(List<String> worldContextPaths) {
            this.worldContextPaths = worldContextPaths;
            return this;
        }

        public Builder rememberFact(boolean rememberFact) {
            this.rememberFact = rememberFact;
            return this;
        }

        public Builder changeRelationship(boolean changeRelationship) {
            this.changeRelationship = changeRelationship;
            return this;
        }

        public Builder maxFacts(int maxFacts) {
            this.maxFacts = maxFacts;
            return this;
        }

        public Builder maxRelationshipChange(int maxRelationshipChange) {
            this.maxRelationshipChange = maxRelationshipChange;
            return this;
        }

        public Builder secretsUnlockAtRelationship(@Nullable Integer secretsUnlockAtRelationship) {
            this.secretsUnlockAtRelationship = secretsUnlockAtRelationship;
            return this;
        }

        public Builder emotions(List<Emotion> emotions) {
            this.emotions = emotions;
            return this;
        }

        public Builder playerOptionCount(int playerOptionCount) {
            this.playerOptionCount = playerOptionCount;
            return this;
        }

        public Builder canEndConversation(boolean canEndConversation) {
            this.canEndConversation = canEndConversation;
            return this;
        }

        public Builder extraInstructions(@Nullable String extraInstructions) {
            this.extraInstructions = extraInstructions;
            return this;
        }

        public Builder compactAfterTurns(int compactAfterTurns) {
            this.compactAfterTurns = compactAfterTurns;
            return this;
        }

        public Builder keepRecentTurns(int keepRecentTurns) {
            this.keepRecentTurns = keepRecentTurns;
            return this;
        }

        public Builder fallbackOnGuardrail(boolean fallbackOnGuardrail) {
            this.fallbackOnGuardrail = fallbackOnGuardrail;
            return this;
        }

        public Builder fallbackLines(List<String> fallbackLines) {
            this.fallbackLines = fallbackLines;
            return this;
        }

        public Builder temperature(@Nullable Double temperature) {
            this.temperature = temperature;
            return this;
        }

        public Builder maximumResponseTokens(@Nullable Integer maximumResponseTokens) {
            this.maximumResponseTokens = maximumResponseTokens;
            return this;
        }

        public Builder barkMaximumTokens(int barkMaximumTokens) {
            this.barkMaximumTokens = barkMaximumTokens;
            return this;
        }

        public Builder sampling(@Nullable Sampling sampling) {
            this.sampling = sampling;
            return this;
        }

        /** @throws IllegalArgumentException when a value is out of range (as the record's constructor checks) */
        public NpcOptions build() {
            return new NpcOptions(
                    replyFormat,
                    groundingTool,
                    toolChoice,
                    maxToolRounds,
                    maxToolCalls,
                    toolTimeout,
                    worldReadable,
                    worldWritable,
                    worldContextPaths,
                    rememberFact,
                    changeRelationship,
                    maxFacts,
                    maxRelationshipChange,
                    secretsUnlockAtRelationship,
                    emotions,
                    playerOptionCount,
                    canEndConversation,
                    extraInstructions,
                    compactAfterTurns,
                    keepRecentTurns,
                    fallbackOnGuardrail,
                    fallbackLines,
                    temperature,
                    maximumResponseTokens,
                    barkMaximumTokens,
                    sampling);
        }
    }
}
