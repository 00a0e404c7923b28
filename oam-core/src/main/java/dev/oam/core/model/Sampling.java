package dev.oam.core.model;

import java.util.List;
import org.jspecify.annotations.Nullable;

/** Sampling strategy for a model step. */
public sealed interface Sampling {
    Greedy GREEDY = new Greedy();

    record Greedy() implements Sampling {}

    record TopK(int k, @Nullable Long seed) implements Sampling {
        public TopK {
            if (k < 1) {
                throw new IllegalArgumentException("topK must be at least 1");
            }
        }
    }

    record TopP(double p, @Nullable Long seed) implements Sampling {
        public TopP {
            if (!(p > 0 && p <= 1)) {
                throw new IllegalArgumentException("topP must be in (0, 1]");
            }
        }
    }

    /**
     * The whole sampler chain (this edition's extension): every member may be {@code null}, meaning the model's
     * default. An engine that samples itself applies, in llama.cpp's order: the repetition penalties, DRY, top-k,
     * typical-p, top-p, min-p, XTC, then the temperature and one draw. A grammar is checked after every cut, so no
     * setting makes a token the grammar requires impossible.
     *
     * @param topK keep the {@code topK} likeliest tokens; 0 keeps all
     * @param topP nucleus: the likeliest tokens whose probabilities add up to {@code topP}, in (0, 1]
     * @param minP drop tokens less likely than {@code minP} times the likeliest, in [0, 1]; 0 is off
     * @param typicalP locally typical sampling, in (0, 1]; 1 is off
     * @param repeatPenalty divides (multiplies, when negative) the logit of every token seen in the last
     *     {@code repeatLastN} tokens; 1 is off
     * @param repeatLastN the window of the three repetition penalties: 0 off, -1 the whole context
     * @param presencePenalty subtracted once from the logit of every token in the window, in [-2, 2]
     * @param frequencyPenalty subtracted from a token's logit once per time it is in the window, in [-2, 2]
     * @param dry "don't repeat yourself": a penalty on the token that would extend a repeated sequence
     * @param xtc "exclude top choices": sometimes drops the likeliest tokens, keeping the least likely of those above
     *     the threshold
     * @param seed the draws' seed
     */
    record Chain(
            @Nullable Integer topK,
            @Nullable Double topP,
            @Nullable Double minP,
            @Nullable Double typicalP,
            @Nullable Double repeatPenalty,
            @Nullable Integer repeatLastN,
            @Nullable Double presencePenalty,
            @Nullable Double frequencyPenalty,
            @Nullable Dry dry,
            @Nullable Xtc xtc,
            @Nullable Long seed)
            implements Sampling {
        /** Nothing set: every member at the model's default. */
        public static final Chain DEFAULTS =
                new Chain(null, null, null, null, null, null, null, null, null, null, null);

        public Chain {
            check(topK == null || topK >= 0, "topK", "an integer ≥ 0 (0 keeps all tokens)");
            check(topP == null || topP > 0 && topP <= 1, "topP", "a number in (0, 1]");
            check(minP == null || minP >= 0 && minP <= 1, "minP", "a number from 0 to 1");
            check(typicalP == null || typicalP > 0 && typicalP <= 1, "typicalP", "a number in (0, 1]");
            check(
                    repeatPenalty == null || repeatPenalty > 0 && repeatPenalty <= 10,
                    "repeatPenalty",
                    "a number in (0, 10] (1 is off)");
            check(repeatLastN == null || repeatLastN >= -1, "repeatLastN", "an integer ≥ -1 (-1: the whole context)");
            check(
                    presencePenalty == null || presencePenalty >= -2 && presencePenalty <= 2,
                    "presencePenalty",
                    "a number from -2 to 2");
            check(
                    frequencyPenalty == null || frequencyPenalty >= -2 && frequencyPenalty <= 2,
                    "frequencyPenalty",
                    "a number from -2 to 2");
        }

        /** This chain with {@code other}'s members wherever {@code other} sets them. */
        public Chain with(Chain other) {
            return new Chain(
                    other.topK != null ? other.topK : topK,
                    other.topP != null ? other.topP : topP,
                    other.minP != null ? other.minP : minP,
                    other.typicalP != null ? other.typicalP : typicalP,
                    other.repeatPenalty != null ? other.repeatPenalty : repeatPenalty,
                    other.repeatLastN != null ? other.repeatLastN : repeatLastN,
                    other.presencePenalty != null ? other.presencePenalty : presencePenalty,
                    other.frequencyPenalty != null ? other.frequencyPenalty : frequencyPenalty,
                    other.dry != null ? other.dry : dry,
                    other.xtc != null ? other.xtc : xtc,
                    other.seed != null ? other.seed : seed);
        }

        /** The chain an original {@link Sampling} stands for: greedy is top-k 1. */
        public static Chain of(@Nullable Sampling sampling) {
            return switch (sampling) {
                case null -> DEFAULTS;
                case Greedy g -> new Chain(1, null, null, null, null, null, null, null, null, null, null);
                case TopK k -> new Chain(k.k(), 1.0, null, null, null, null, null, null, null, null, k.seed());
                case TopP p -> new Chain(0, p.p(), null, null, null, null, null, null, null, null, p.seed());
                case Chain c -> c;
            };
        }
    }

    /**
     * DRY: when the tokens before the next one repeat a sequence of the context at least {@code allowedLength} long,
     * the token that would continue the repeat loses {@code multiplier * base^(length - allowedLength)} of its logit. A
     * sequence breaker (a token whose text holds one of the strings) ends a match.
     *
     * @param multiplier 0 is off
     * @param base at least 1
     * @param allowedLength the longest repeat that goes unpenalised, at least 1
     * @param penaltyLastN the tokens looked back at: -1 the whole context, 0 off
     * @param sequenceBreakers strings that end a match; {@code null}: {@link #DEFAULT_BREAKERS}
     */
    record Dry(
            double multiplier,
            double base,
            int allowedLength,
            int penaltyLastN,
            @Nullable List<String> sequenceBreakers) {
        /** llama.cpp's default breakers: a new line, a colon, a double quote and an asterisk. */
        public static final List<String> DEFAULT_BREAKERS = List.of("\n", ":", "\"", "*");

        public static final double DEFAULT_BASE = 1.75;
        public static final int DEFAULT_ALLOWED_LENGTH = 2;

        public Dry {
            check(multiplier >= 0 && multiplier <= 100, "dry.multiplier", "a number from 0 to 100 (0 is off)");
            check(base >= 1 && base <= 10, "dry.base", "a number from 1 to 10");
            check(allowedLength >= 1, "dry.allowedLength", "an integer ≥ 1");
            check(penaltyLastN >= -1, "dry.penaltyLastN", "an integer ≥ -1 (-1: the whole context)");
            if (sequenceBreakers != null) {
                sequenceBreakers = List.copyOf(sequenceBreakers);
                check(sequenceBreakers.size() <= 64, "dry.sequenceBreakers", "at most 64 strings");
                for (String s : sequenceBreakers) {
                    check(
                            !s.isEmpty() && s.length() <= 40,
                            "dry.sequenceBreakers",
                            "a list of strings of 1 to 40 characters");
                }
            }
        }

        /** DRY at {@code multiplier} with llama.cpp's defaults otherwise (base 1.75, allowed length 2, all context). */
        public static Dry of(double multiplier) {
            return new Dry(multiplier, DEFAULT_BASE, DEFAULT_ALLOWED_LENGTH, -1, null);
        }

        public List<String> breakers() {
            return sequenceBreakers != null ? sequenceBreakers : DEFAULT_BREAKERS;
        }
    }

    /**
     * XTC: with chance {@code probability} per token, the tokens at least {@code threshold} likely are dropped but the
     * least likely of them, when there are two or more.
     */
    record Xtc(double probability, double threshold) {
        public Xtc {
            check(probability >= 0 && probability <= 1, "xtc.probability", "a number from 0 to 1");
            check(threshold >= 0 && threshold <= 1, "xtc.threshold", "a number from 0 to 1 (above 0.5 is off)");
        }
    }

    /** @throws IllegalArgumentException {@code "<name> must be <expected>."} when not {@code ok} */
    private static void check(boolean ok, String name, String expected) {
        if (!ok) {
            throw new IllegalArgumentException(name + " must be " + expected + ".");
        }
    }
}
