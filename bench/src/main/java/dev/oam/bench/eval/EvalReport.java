package dev.oam.bench.eval;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The evaluation's tables: a row per model, kind, backend and mode (and split), and the overall table per half. */
public final class EvalReport {
    private EvalReport() {}

    static String report(EvalConfig config, List<Outcome> outcomes, double minutes) {
        StringBuilder out = new StringBuilder();
        String set = config.set();
        out.append(
                Double.isNaN(minutes)
                        ? String.format(
                                Locale.ROOT,
                                "oam eval %s, %d turns (from earlier runs' outcomes)%n%n",
                                set,
                                outcomes.size())
                        : String.format(
                                Locale.ROOT,
                                "oam eval %s on %s, %d threads, %.1f minutes, %d turns%n%n",
                                set,
                                String.join(" and ", config.models()),
                                config.threads(),
                                minutes,
                                outcomes.size()));
        out.append(
                "| split | model | kind | backend | toolChoice | cases | right | right args | one call | clean | names fact | valid | other | "
                        + "timeouts | turn p50 / p95 s | first token p50 s | decode tok/s | tokens in / out per turn |\n");
        out.append("|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        Map<String, List<Outcome>> groups = new LinkedHashMap<>();
        for (Outcome o : outcomes) {
            String modelName = o.model() == null ? "gemma" : o.model();
            groups.computeIfAbsent(
                            EvalRules.split(o.id()) + "|" + modelName + "|" + o.kind() + "|" + o.backend() + "|"
                                    + o.mode(),
                            k -> new ArrayList<>())
                    .add(o);
        }
        // the tuning half's rows first, then the held-out half's; each half's in the order the cases ran
        List<Map.Entry<String, List<Outcome>>> ordered = new ArrayList<>(groups.entrySet());
        ordered.sort(java.util.Comparator.comparing(e -> e.getKey().startsWith("held-out")));
        for (Map.Entry<String, List<Outcome>> group : ordered) {
            String[] key = group.getKey().split("\\|");
            List<Outcome> list = group.getValue();
            List<Double> turns = list.stream().map(Outcome::turnMs).toList();
            List<Double> firsts =
                    list.stream().map(Outcome::firstMs).filter(x -> x != null).toList();
            List<Double> rates = new ArrayList<>();
            List<Double> ins = new ArrayList<>();
            List<Double> outs = new ArrayList<>();
            for (Outcome o : list) {
                if (o.outTokens() != null) {
                    ins.add((double) o.inTokens());
                    outs.add((double) o.outTokens());
                    if (o.firstMs() != null && o.outTokens() > 1 && o.turnMs() > o.firstMs()) {
                        rates.add((o.outTokens() - 1) / ((o.turnMs() - o.firstMs()) / 1000));
                    }
                }
            }
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %d | %s / %s | %s | %s | %s / %s |%n",
                    key[0],
                    key[1],
                    label(key[2]),
                    key[3],
                    key[4],
                    list.size(),
                    pct(list.stream().filter(Outcome::right).count(), list.size()),
                    share(list, Outcome::rightArgs),
                    share(list, Outcome::oneCall),
                    share(list, Outcome::clean),
                    share(list, Outcome::namesFact),
                    pct(list.stream().filter(Outcome::valid).count(), list.size()),
                    share(list, Outcome::extra),
                    list.stream().filter(o -> Boolean.TRUE.equals(o.timeout())).count(),
                    seconds(percentile(turns, 50)),
                    seconds(percentile(turns, 95)),
                    firsts.isEmpty() ? "–" : seconds(percentile(firsts, 50)),
                    rates.isEmpty() ? "–" : String.format(Locale.ROOT, "%.1f", percentile(rates, 50)),
                    ins.isEmpty() ? "–" : String.format(Locale.ROOT, "%.0f", percentile(ins, 50)),
                    outs.isEmpty() ? "–" : String.format(Locale.ROOT, "%.0f", percentile(outs, 50))));
        }
        // Overall: of each half, model and backend, the cases right (every kind counts one per case).
        out.append("\n| split | model | backend | cases | right |\n|---|---|---|---:|---:|\n");
        Map<String, long[]> totals =
                new java.util.TreeMap<>(java.util.Comparator.comparing((String k) -> k.startsWith("held-out"))
                        .thenComparing(k -> k));
        for (Outcome o : outcomes) {
            long[] t = totals.computeIfAbsent(
                    EvalRules.split(o.id()) + "|" + (o.model() == null ? "gemma" : o.model()) + "|" + o.backend(),
                    k -> new long[2]);
            t[0]++;
            t[1] += o.right() ? 1 : 0;
        }
        totals.forEach((k, t) -> {
            String[] key = k.split("\\|");
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %d | %d (%s) |%n",
                    key[0],
                    key[1],
                    key[2],
                    t[0],
                    t[1],
                    pct(t[1], t[0])));
        });
        out.append("""

                right: the expected tool called (none: an answer without a call); decisions the right option; NPC the line names \
                the fact the tool returned; content valid and on topic. right args: of the right calls, the arguments carry the \
                prompt's values. one call: of the forced steps that called, exactly one call. clean: no protocol text (tool_calls, \
                {", "name":, Output of, chat markers, U+FFFD, instructions read back) in the answer, line, options, reasoning, \
                argument or content strings, and (answers, lines) some words; NPC also no schema words in the line. names fact: \
                the answer after the tool round (after) or the line (NPC) names the tool output's fact. valid: arguments fit the \
                schema / an offered option without fallback / a non-fallback line / the value fits the schema. other: NPC player \
                options are player lines (3+ words, no schema words or property names); decisions reasoning of 3+ words; content \
                no string cut mid-word; NPC conversations no repetition (v1 NPC: in persona). NPC conversation (v3): right = every \
                turn valid, each fact named, no secret told; turn time per turn. A share is of the outcomes that have the measure; a timed-out case \
                fails and has none. Medians for tokens and decode rate; details per case in bench/target/eval-%s.jsonl.
                """.formatted(set));
        return out.toString();
    }

    /** The share of TRUE among the outcomes that have the measure, or "–" when none has it. */
    static String share(List<Outcome> list, java.util.function.Function<Outcome, Boolean> measure) {
        long with = list.stream().filter(o -> measure.apply(o) != null).count();
        return with == 0
                ? "–"
                : pct(
                        list.stream()
                                .filter(o -> Boolean.TRUE.equals(measure.apply(o)))
                                .count(),
                        with);
    }

    static String label(String kind) {
        return switch (kind) {
            case "tools" -> "tool selection";
            case "args" -> "tool args";
            case "choice" -> "one of four";
            case "none" -> "no tool fits";
            case "after" -> "after a tool";
            case "decisions" -> "decision";
            case "npc" -> "NPC turn";
            case "fit" -> "a tool fits";
            case "talk" -> "NPC conversation";
            default -> "content";
        };
    }

    static String pct(long part, long whole) {
        return whole == 0 ? "–" : Math.round(100.0 * part / whole) + " %";
    }

    static String seconds(double ms) {
        return String.format(Locale.ROOT, "%.1f", ms / 1000);
    }

    /** The nearest-rank {@code p}th percentile of {@code values}. */
    public static double percentile(List<Double> values, int p) {
        List<Double> sorted = new ArrayList<>(values);
        sorted.sort(null);
        int index = (int) Math.ceil(p / 100.0 * sorted.size()) - 1;
        return sorted.get(Math.max(0, Math.min(sorted.size() - 1, index)));
    }
}
