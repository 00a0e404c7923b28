package dev.oam.model.llama.ffm;

import dev.oam.core.Log;
import dev.oam.core.model.AgentException;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.Generation;
import dev.oam.model.llama.engine.GenerationEvents.Delta;
import dev.oam.model.llama.engine.SlotTable;
import dev.oam.model.llama.engine.Utf8Pieces;
import dev.oam.model.llama.grammar.TokenConstraint;
import java.util.Arrays;
import java.util.SplittableRandom;
import org.jspecify.annotations.Nullable;

/**
 * One request on the FFM engine: its tokens (prompt, then sampled), how many of them its lane's cache holds, and what
 * it has sampled. Fields not final are the decode thread's.
 */
final class FfmGeneration extends Generation {
    /**
     * How long a cancelled caller waits for the decode thread to drop the request, which it does at its next step (at
     * most one decode: a chunk of this request's prompt): a cancel answers within this even on a loaded machine, and
     * the lane is free once the current decode ends.
     */
    static final long CANCEL_ANSWER_MS = 50;

    private final FfmEngine engine;
    final EngineRequest request;
    final SlotTable.Lease lease;
    final int promptLength;
    final SplittableRandom random;
    final @Nullable TokenConstraint constraint;
    final Utf8Pieces text = new Utf8Pieces();
    final StringBuilder answer = new StringBuilder();
    /** The most tokens to sample; lowered once when the output loops inside a structure (then {@link #loopClosed}). */
    int maxTokens;

    boolean loopClosed;
    int[] tokens;
    int size;
    int nPast;
    int sampled;
    boolean cachedLost;

    FfmGeneration(
            FfmEngine engine,
            EngineRequest request,
            int maxTokens,
            int[] prompt,
            SlotTable.Lease lease,
            @Nullable TokenConstraint constraint) {
        super(CANCEL_ANSWER_MS);
        this.engine = engine;
        this.request = request;
        this.constraint = constraint;
        this.maxTokens = maxTokens;
        this.lease = lease;
        this.promptLength = prompt.length;
        this.tokens = Arrays.copyOf(prompt, prompt.length + Math.min(maxTokens, 256));
        this.size = prompt.length;
        this.random = new SplittableRandom(request.seed());
    }

    /** Adds a sampled (or forced) token. */
    void append(int token) {
        if (size == tokens.length) {
            tokens = Arrays.copyOf(tokens, size * 2);
        }
        tokens[size++] = token;
    }

    /** Adds {@code delta} to the answer and sends it to the caller; nothing when empty. */
    void emit(String delta) {
        if (!delta.isEmpty()) {
            answer.append(delta);
            post(new Delta(delta));
        }
    }

    @Override
    protected void cancelled() {
        engine.wake();
    }

    @Override
    protected void stillBusy() {
        Log.debug("llama lane " + lease.id() + " is freed after the current decode");
    }

    @Override
    protected boolean engineClosed() {
        return engine.isClosed();
    }

    @Override
    protected AgentException failure(Throwable error) {
        return FfmEngine.failure(error);
    }
}
