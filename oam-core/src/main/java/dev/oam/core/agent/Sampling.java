package dev.oam.core.agent;

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
}
