package dev.oam.core.agent;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.Sampling;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The JSON form of {@link Sampling.Chain}, the same on every transport: {@code {"topK", "topP", "minP", "typicalP",
 * "repeatPenalty", "repeatLastN", "presencePenalty", "frequencyPenalty", "dry": {"multiplier", "base", "allowedLength",
 * "penaltyLastN", "sequenceBreakers"}, "xtc": {"probability", "threshold"}, "seed"}}, every member optional. Reading
 * validates every member and refuses unknown ones.
 */
public final class SamplerCodec {
    private static final Set<String> MEMBERS = Set.of(
            "topK",
            "topP",
            "minP",
            "typicalP",
            "repeatPenalty",
            "repeatLastN",
            "presencePenalty",
            "frequencyPenalty",
            "dry",
            "xtc",
            "seed");
    private static final Set<String> DRY =
            Set.of("multiplier", "base", "allowedLength", "penaltyLastN", "sequenceBreakers");
    private static final Set<String> XTC = Set.of("probability", "threshold");

    private SamplerCodec() {}

    /**
     * Reads a chain.
     *
     * @throws IllegalArgumentException a message naming the member relative to the object ({@code "dry.base must be a
     *     number from 1 to 10."})
     */
    public static Sampling.Chain read(JsonNode node) {
        if (!node.isObject()) {
            throw new IllegalArgumentException(
                    "must be an object with any of " + String.join(", ", sorted(MEMBERS)) + ".");
        }
        unknown(node, MEMBERS, "");
        Sampling.Dry dry = null;
        JsonNode d = node.get("dry");
        if (d != null && !d.isNull()) {
            if (!d.isObject()) {
                throw new IllegalArgumentException("dry must be an object {multiplier, base?, allowedLength?, "
                        + "penaltyLastN?, sequenceBreakers?}.");
            }
            unknown(d, DRY, "dry.");
            Double multiplier = number(d, "multiplier", "dry.");
            if (multiplier == null) {
                throw new IllegalArgumentException("dry.multiplier is required (a number from 0 to 100).");
            }
            Double base = number(d, "base", "dry.");
            Integer allowed = integer(d, "allowedLength", "dry.");
            Integer lastN = integer(d, "penaltyLastN", "dry.");
            List<String> breakers = null;
            JsonNode b = d.get("sequenceBreakers");
            if (b != null && !b.isNull()) {
                if (!b.isArray()) {
                    throw new IllegalArgumentException("dry.sequenceBreakers must be a list of strings.");
                }
                breakers = new ArrayList<>();
                for (JsonNode s : b) {
                    if (!s.isTextual()) {
                        throw new IllegalArgumentException("dry.sequenceBreakers must be a list of strings.");
                    }
                    breakers.add(s.textValue());
                }
            }
            dry = new Sampling.Dry(
                    multiplier,
                    base != null ? base : Sampling.Dry.DEFAULT_BASE,
                    allowed != null ? allowed : Sampling.Dry.DEFAULT_ALLOWED_LENGTH,
                    lastN != null ? lastN : -1,
                    breakers);
        }
        Sampling.Xtc xtc = null;
        JsonNode x = node.get("xtc");
        if (x != null && !x.isNull()) {
            if (!x.isObject()) {
                throw new IllegalArgumentException("xtc must be an object {probability, threshold}.");
            }
            unknown(x, XTC, "xtc.");
            Double probability = number(x, "probability", "xtc.");
            Double threshold = number(x, "threshold", "xtc.");
            if (probability == null || threshold == null) {
                throw new IllegalArgumentException("xtc needs both probability and threshold (numbers from 0 to 1).");
            }
            xtc = new Sampling.Xtc(probability, threshold);
        }
        Long seed = null;
        JsonNode s = node.get("seed");
        if (s != null && !s.isNull()) {
            if (!s.isIntegralNumber() || !s.canConvertToLong()) {
                throw new IllegalArgumentException("seed must be an integer.");
            }
            seed = s.longValue();
        }
        return new Sampling.Chain(
                integer(node, "topK", ""),
                number(node, "topP", ""),
                number(node, "minP", ""),
                number(node, "typicalP", ""),
                number(node, "repeatPenalty", ""),
                integer(node, "repeatLastN", ""),
                number(node, "presencePenalty", ""),
                number(node, "frequencyPenalty", ""),
                dry,
                xtc,
                seed);
    }

    /** The chain's JSON form, with only the members it sets. */
    public static ObjectNode write(Sampling.Chain c) {
        ObjectNode o = Json.object();
        putIf(o, "topK", c.topK());
        putIf(o, "topP", c.topP());
        putIf(o, "minP", c.minP());
        putIf(o, "typicalP", c.typicalP());
        putIf(o, "repeatPenalty", c.repeatPenalty());
        putIf(o, "repeatLastN", c.repeatLastN());
        putIf(o, "presencePenalty", c.presencePenalty());
        putIf(o, "frequencyPenalty", c.frequencyPenalty());
        Sampling.Dry dry = c.dry();
        if (dry != null) {
            ObjectNode d = o.putObject("dry");
            d.put("multiplier", dry.multiplier());
            d.put("base", dry.base());
            d.put("allowedLength", dry.allowedLength());
            d.put("penaltyLastN", dry.penaltyLastN());
            if (dry.sequenceBreakers() != null) {
                ArrayNode b = d.putArray("sequenceBreakers");
                dry.sequenceBreakers().forEach(b::add);
            }
        }
        Sampling.Xtc xtc = c.xtc();
        if (xtc != null) {
            o.putObject("xtc").put("probability", xtc.probability()).put("threshold", xtc.threshold());
        }
        if (c.seed() != null) {
            o.put("seed", c.seed());
        }
        return o;
    }

    private static void putIf(ObjectNode o, String name, @Nullable Number value) {
        if (value instanceof Integer i) {
            o.put(name, i);
        } else if (value != null) {
            o.put(name, value.doubleValue());
        }
    }

    private static void unknown(JsonNode node, Set<String> known, String prefix) {
        for (Iterator<String> names = node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            if (!known.contains(name)) {
                throw new IllegalArgumentException(
                        prefix + name + " is not a sampler setting (known: " + String.join(", ", sorted(known)) + ").");
            }
        }
    }

    private static List<String> sorted(Set<String> names) {
        return names.stream().sorted().toList();
    }

    private static @Nullable Double number(JsonNode node, String name, String prefix) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isNumber() || !Double.isFinite(v.doubleValue())) {
            throw new IllegalArgumentException(prefix + name + " must be a finite number.");
        }
        return v.doubleValue();
    }

    private static @Nullable Integer integer(JsonNode node, String name, String prefix) {
        JsonNode v = node.get(name);
        if (v == null || v.isNull()) {
            return null;
        }
        if (!v.isNumber()
                || v.decimalValue().stripTrailingZeros().scale() > 0
                || v.decimalValue().compareTo(BigDecimal.valueOf(Integer.MAX_VALUE)) > 0
                || v.decimalValue().compareTo(BigDecimal.valueOf(Integer.MIN_VALUE)) < 0) {
            throw new IllegalArgumentException(prefix + name + " must be an integer.");
        }
        return v.decimalValue().intValue();
    }
}
