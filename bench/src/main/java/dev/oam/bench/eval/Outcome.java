package dev.oam.bench.eval;

/**
 * One case on one backend. v1 fills the first fourteen members (model "gemma" when absent from an old file); v2 adds
 * the calls of the forced step, cleanliness, the fact, the longest string value and whether the case timed out.
 * {@code extra}: in persona (v1 NPC), player options that are player lines (v2 NPC), reasoning of 3 words or more (v2
 * decisions), no string cut mid-word (v2 content).
 */
record Outcome(
        String model,
        String kind,
        String backend,
        String mode,
        String id,
        boolean right,
        Boolean rightArgs,
        boolean valid,
        Boolean extra,
        double turnMs,
        Double firstMs,
        Integer inTokens,
        Integer outTokens,
        String note,
        Integer calls,
        Boolean oneCall,
        Boolean clean,
        Boolean namesFact,
        Integer longest,
        Boolean timeout) {}
