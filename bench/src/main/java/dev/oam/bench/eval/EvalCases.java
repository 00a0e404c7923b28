package dev.oam.bench.eval;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which cases of a set run: the files of the chosen kinds, and the cases after --split, --sample, --cases and --limit.
 */
final class EvalCases {
    private EvalCases() {}

    static final List<String> TOOL_KINDS = List.of("args", "choice", "none", "after", "fit");

    /** The files the chosen kinds live in (v2's tool kinds are in tools.json). */
    static List<String> fileKinds(EvalConfig config) {
        List<String> files = new ArrayList<>();
        for (String kind : config.kinds()) {
            String file = TOOL_KINDS.contains(kind) ? "tools" : kind;
            if (!files.contains(file)) {
                files.add(file);
            }
        }
        return files;
    }

    /** The cases of one file after --sample, --cases and --limit (v2 tools: --limit per tool kind). */
    static List<JsonNode> chosen(EvalConfig config, String kind, JsonNode file) {
        List<JsonNode> chosen = new ArrayList<>();
        file.path("cases").forEach(chosen::add);
        if (!config.split().equals("all")) {
            chosen = chosen.stream()
                    .filter(c -> EvalRules.split(c.path("id").asText()).equals(config.split()))
                    .toList();
        }
        if (kind.equals("tools") && !config.set().equals("v1")) {
            boolean all = config.kinds().contains("tools");
            chosen = chosen.stream()
                    .filter(c -> all || config.kinds().contains(c.path("kind").asText()))
                    .toList();
        }
        Integer spread = config.sample().get(kind);
        if (spread != null && spread < chosen.size()) {
            List<JsonNode> picked = new ArrayList<>();
            for (int k = 0; k < spread; k++) {
                picked.add(chosen.get((int) ((long) k * chosen.size() / spread)));
            }
            chosen = picked;
        }
        if (!config.cases().isEmpty()) {
            chosen = chosen.stream()
                    .filter(c -> config.cases().contains(c.path("id").asText()))
                    .toList();
        }
        Map<String, Integer> counts = new LinkedHashMap<>();
        List<JsonNode> limited = new ArrayList<>();
        for (JsonNode c : chosen) {
            String group = c.path("kind").asText(kind);
            if (counts.merge(group, 1, Integer::sum) <= config.limit()) {
                limited.add(c);
            }
        }
        return limited;
    }
}
