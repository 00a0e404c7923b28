package dev.oam.model.llama.ffm;

import static java.lang.foreign.ValueLayout.JAVA_FLOAT;

import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.RepetitionGuard;
import dev.oam.model.llama.engine.SamplerExtras;
import dev.oam.model.llama.engine.TokenSampler;
import dev.oam.model.llama.grammar.TokenConstraint;
import java.io.ByteArrayOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntPredicate;
import org.jspecify.annotations.Nullable;

/**
 * Picks each request's next token, sampling in Java on its logits row ({@link TokenSampler}), so greedy results do not
 * depend on what else was in the batch. A grammar ({@link TokenConstraint}) is checked per step: the unconstrained
 * winner first, the mask only when it is rejected; an end-of-generation token only where the grammar may end; stop once
 * it is complete. Near the end of the budget the way to the grammar's end is steered ({@link #closing}), and text the
 * grammar forces is fed without sampling ({@link #fastForward}). Decode thread only.
 */
final class TokenPicker {
    /** The most forced code points fed at once. */
    private static final int FORCED_MAX = 64;
    /** Tokens past which a closing is never forced: a step's structure closes within this many code points. */
    private static final int CLOSING_WINDOW = 256;
    /** Candidates tried in order of the model's preference before every allowed token is looked at. */
    private static final int CLOSING_CANDIDATES = 64;

    /** A request that cannot go on: the decode thread fails it with {@link #getCause()}. */
    static final class Failure extends RuntimeException {
        Failure(Throwable cause) {
            super(cause);
        }
    }

    private final LlamaNative api;
    private final ModelVocab vocab;
    private final int contextSize;
    private final boolean forced;
    private final FfmObserver observer;
    private final float[] logits;
    private final long[] mask;
    private final TokenSampler sampler = new TokenSampler();
    private final MemorySegment pieceBuffer = Arena.ofAuto().allocate(256);
    private List<String> breakerStrings = List.of();
    private @Nullable IntPredicate breakerTest;

    TokenPicker(ModelVocab vocab, int contextSize, FfmTuning tuning, FfmObserver observer) {
        this.api = vocab.api;
        this.vocab = vocab;
        this.contextSize = contextSize;
        this.forced = tuning.forced();
        this.observer = observer;
        this.logits = new float[vocab.size];
        this.mask = new long[(vocab.size + 63) >>> 6];
    }

    /**
     * Samples {@code g}'s next token from row {@code row} of {@code context}'s logits and appends it (with any forced
     * text after it). Returns whether {@code g} is done: an end-of-generation token, a complete grammar, the budget or
     * the context reached.
     *
     * @throws Failure no logits, or the grammar allows no token
     */
    @SuppressWarnings("restricted") // the logits row llama.cpp returns has no size until it is given one
    boolean sample(MemorySegment context, FfmGeneration g, int row) {
        int nVocab = vocab.size;
        try {
            MemorySegment row0 = (MemorySegment) api.getLogitsIth.invokeExact(context, row);
            if (row0.equals(MemorySegment.NULL)) {
                throw new IllegalStateException("no logits for row " + row);
            }
            MemorySegment.copy(row0.reinterpret(nVocab * 4L), JAVA_FLOAT, 0, logits, 0, nVocab);
            if (g.sampled == 0 && observer != FfmObserver.NONE) {
                observer.firstLogits(logits.clone());
            }
        } catch (Throwable e) {
            throw new Failure(e);
        }
        EngineRequest r = g.request;
        SamplerExtras x = r.extras();
        if (x != SamplerExtras.NONE) {
            sampler.penalize(logits, nVocab, g.tokens, g.size, x, breakers(x.dryBreakers()));
        }
        int token = sampler.sample(logits, nVocab, null, r.temperature(), r.topK(), r.topP(), x, g.random);
        TokenConstraint constraint = g.constraint;
        if (constraint != null && !constraint.allows(token)) {
            constraint.fillMask(mask);
            token = sampler.sample(logits, nVocab, mask, r.temperature(), r.topK(), r.topP(), x, g.random);
            if (token < 0) {
                throw new Failure(new IllegalStateException("the grammar allows no token here"));
            }
        }
        if (constraint != null) {
            token = closing(g, constraint, token);
        }
        if (vocab.endsGeneration(token)) {
            return true;
        }
        if (constraint != null) {
            constraint.accept(token);
        }
        g.sampled++;
        g.append(token);
        String delta = g.text.add(vocab.piece(token, pieceBuffer));
        g.emit(delta);
        if (!delta.isEmpty() && constraint != null && !g.loopClosed && RepetitionGuard.repeatedUnit(g.answer) > 0) {
            // A loop inside a structure (an NPC's line said over and over): close the structure now, within reach.
            int distance = constraint.stepsToEnd();
            if (distance > 0 && distance != Integer.MAX_VALUE) {
                g.maxTokens = Math.min(g.maxTokens, g.sampled + distance + 1);
                g.loopClosed = true;
            }
        }
        if (constraint != null && forced && !constraint.isComplete()) {
            fastForward(g, constraint);
        }
        return constraint != null && constraint.isComplete() || g.sampled >= g.maxTokens || g.size >= contextSize;
    }

    /**
     * Whether a token ends a DRY match: its text holds one of {@code strings}. Worked out once per token and kept for
     * the last list of breakers asked for (requests almost always share one).
     */
    private IntPredicate breakers(List<String> strings) {
        if (breakerTest != null && strings.equals(breakerStrings)) {
            return breakerTest;
        }
        breakerStrings = List.copyOf(strings);
        byte[] state = new byte[vocab.size];
        List<String> wanted = breakerStrings;
        breakerTest = token -> {
            if (token < 0 || token >= state.length) {
                return true;
            }
            byte known = state[token];
            if (known == 0) {
                String text = new String(vocab.piece(token, pieceBuffer), StandardCharsets.UTF_8);
                boolean breaks = vocab.isControl(token) || vocab.endsGeneration(token);
                for (int i = 0; i < wanted.size() && !breaks; i++) {
                    breaks = text.contains(wanted.get(i));
                }
                known = breaks ? (byte) 2 : (byte) 1;
                state[token] = known;
            }
            return known == 2;
        };
        return breakerTest;
    }

    /**
     * Appends the tokens of the text {@code constraint} forces next, less the last token of its tokenization (a token
     * the model chooses may join that text to what follows, as the model's own tokenizer would: fed a lone trailing
     * space, SmolLM2-135M wrote {@code "}}} 1000."} as an argument), when they are allowed one after another and fit
     * the budget. They are decoded with the next step, in one batch, and count as output tokens.
     */
    private void fastForward(FfmGeneration g, TokenConstraint constraint) {
        String text = constraint.forcedText(FORCED_MAX);
        if (text.codePointCount(0, text.length()) < 3) {
            return;
        }
        int[] all;
        try {
            all = vocab.tokenize(text, false, false);
        } catch (RuntimeException e) {
            return;
        }
        if (all.length < 3) {
            return;
        }
        int[] tokens = Arrays.copyOf(all, all.length - 1);
        if (g.maxTokens - g.sampled <= tokens.length + 1 || g.size + tokens.length >= contextSize) {
            return;
        }
        ByteArrayOutputStream pieces = new ByteArrayOutputStream();
        for (int token : tokens) {
            if (vocab.endsGeneration(token) || vocab.isControl(token)) {
                return;
            }
            pieces.writeBytes(vocab.piece(token, pieceBuffer));
        }
        byte[] fed = pieces.toByteArray();
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        if (fed.length >= utf8.length || !Arrays.equals(fed, 0, fed.length, utf8, 0, fed.length)) {
            return; // a tokenizer that adds a space or drops one: sample instead
        }
        for (int token : tokens) {
            if (!constraint.allows(token)) {
                return; // the tokens before this one are taken; the model samples from here
            }
            constraint.accept(token);
            g.sampled++;
            g.append(token);
            observer.forcedToken();
            g.emit(g.text.add(vocab.piece(token, pieceBuffer)));
        }
    }

    /**
     * {@code token}, or, when the step's token budget runs low, a token that brings the end of the grammar closer: a
     * constrained output (a call, a JSON value) is closed within its budget instead of being cut mid-structure, so
     * strings need no length cap sized in advance for the worst case. The model still chooses: among the allowed tokens
     * that shorten the way to the end, the one it prefers most.
     */
    private int closing(FfmGeneration g, TokenConstraint constraint, int token) {
        int left = g.maxTokens - g.sampled; // this token included
        if (left > CLOSING_WINDOW || constraint.stepsToEnd() == Integer.MAX_VALUE) {
            return token;
        }
        int room = left - 1; // tokens after this one: the end must stay within reach of them
        if (constraint.stepsToEndAfter(token) <= room) {
            return token;
        }
        int nVocab = vocab.size;
        constraint.fillMask(mask);
        long[] candidates = mask.clone();
        for (int tried = 0; tried < CLOSING_CANDIDATES; tried++) {
            int best = -1;
            for (int t = 0; t < nVocab; t++) {
                if ((candidates[t >>> 6] & (1L << t)) != 0 && (best < 0 || logits[t] > logits[best])) {
                    best = t;
                }
            }
            if (best < 0) {
                return token;
            }
            if (constraint.stepsToEndAfter(best) <= room) {
                return best;
            }
            candidates[best >>> 6] &= ~(1L << best);
        }
        int best = -1;
        int nearest = Integer.MAX_VALUE;
        for (int t = 0; t < nVocab; t++) {
            if ((candidates[t >>> 6] & (1L << t)) != 0) {
                int after = constraint.stepsToEndAfter(t);
                if (after < nearest || (after == nearest && logits[t] > logits[best])) {
                    best = t;
                    nearest = after;
                }
            }
        }
        return best < 0 ? token : best; // none within reach: the nearest to the end
    }
}
