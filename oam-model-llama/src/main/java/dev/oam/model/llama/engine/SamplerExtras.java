package dev.oam.model.llama.engine;

import dev.oam.core.model.Sampling;
import java.util.List;

/**
 * The sampler settings beyond temperature, top-k and top-p (see {@code Sampling.Chain} for their meaning), with every
 * default filled in: {@link #NONE} changes nothing.
 *
 * @param repeatLastN the window of the repeat, presence and frequency penalties: 0 off, -1 the whole context
 * @param dryPenaltyLastN the tokens DRY looks back at: 0 off, -1 the whole context
 */
public record SamplerExtras(
        double minP,
        double typicalP,
        double repeatPenalty,
        int repeatLastN,
        double presencePenalty,
        double frequencyPenalty,
        double dryMultiplier,
        double dryBase,
        int dryAllowedLength,
        int dryPenaltyLastN,
        List<String> dryBreakers,
        double xtcProbability,
        double xtcThreshold) {
    /** llama.cpp's default DRY sequence breakers. */
    public static final List<String> DEFAULT_BREAKERS = List.of("\n", ":", "\"", "*");

    public static final SamplerExtras NONE =
            new SamplerExtras(0, 1, 1, 64, 0, 0, 0, 1.75, 2, -1, DEFAULT_BREAKERS, 0, 0.1);

    public SamplerExtras {
        dryBreakers = List.copyOf(dryBreakers);
    }

    /** The extras {@code chain} sets, llama.cpp's defaults for the rest; {@link #NONE} when it sets none. */
    public static SamplerExtras of(Sampling.Chain chain) {
        Sampling.Dry dry = chain.dry();
        Sampling.Xtc xtc = chain.xtc();
        SamplerExtras x = new SamplerExtras(
                or(chain.minP(), NONE.minP),
                or(chain.typicalP(), NONE.typicalP),
                or(chain.repeatPenalty(), NONE.repeatPenalty),
                chain.repeatLastN() != null ? chain.repeatLastN() : NONE.repeatLastN,
                or(chain.presencePenalty(), NONE.presencePenalty),
                or(chain.frequencyPenalty(), NONE.frequencyPenalty),
                dry != null ? dry.multiplier() : NONE.dryMultiplier,
                dry != null ? dry.base() : NONE.dryBase,
                dry != null ? dry.allowedLength() : NONE.dryAllowedLength,
                dry != null ? dry.penaltyLastN() : NONE.dryPenaltyLastN,
                dry != null ? dry.breakers() : NONE.dryBreakers,
                xtc != null ? xtc.probability() : NONE.xtcProbability,
                xtc != null ? xtc.threshold() : NONE.xtcThreshold);
        return x.equals(NONE) ? NONE : x;
    }

    private static double or(@org.jspecify.annotations.Nullable Double value, double otherwise) {
        return value != null ? value : otherwise;
    }

    /** Whether the repeat, presence or frequency penalty changes anything. */
    public boolean penalizes() {
        return repeatLastN != 0 && (repeatPenalty != 1 || presencePenalty != 0 || frequencyPenalty != 0);
    }

    /** Whether DRY is on. */
    public boolean dry() {
        return dryMultiplier > 0 && dryPenaltyLastN != 0;
    }

    /** Whether XTC may drop tokens. */
    public boolean xtc() {
        return xtcProbability > 0 && xtcThreshold <= 0.5;
    }
}
