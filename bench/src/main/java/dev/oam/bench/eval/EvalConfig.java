package dev.oam.bench.eval;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** What one run of the evaluation does: the options of {@code bench/run eval}. */
record EvalConfig(
        Path root,
        String set,
        List<String> models,
        int limit,
        Map<String, Integer> sample,
        List<String> kinds,
        List<String> backends,
        int threads,
        int toolTokens,
        int contentTokens,
        Set<String> cases,
        Duration caseTimeout,
        Path gemmaTemplate,
        String split) {}
