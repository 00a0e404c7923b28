package dev.oam.model.llama.ffm;

import dev.oam.core.Environment;
import dev.oam.core.Log;
import dev.oam.model.llama.engine.EngineSettings;
import org.jspecify.annotations.Nullable;

/**
 * How an FFM engine decodes: the grammar implementation it applies, and the switches that trade reproducibility or
 * speed (every one but {@code grammar} is for comparison only; the defaults are what the engine is tested and measured
 * with). Read from system properties and the environment in one place, {@link #read}, when an engine is opened; a host
 * or test may pass its own.
 *
 * @param forced whether text the grammar forces (JSON's punctuation and keys between two values) is fed to the model in
 *     one batch with the next decode instead of sampled a token at a time ({@code -Doam.llama.forced=false} turns it
 *     off). A decode of one row costs about as much as one of several on these models, so a tool call, whose text is
 *     mostly forced, takes a few decodes instead of one per token.
 * @param pad whether a decode of one row, or with one output row, may get a padding row ({@code -Doam.llama.pad=false}
 *     turns it off); only models with floating-point matrices get it ({@code ModelFile.floatMatrices}). llama.cpp
 *     computes a product of one row with other kernels than a product of several, which round differently. With lanes,
 *     every such decode is padded, so a greedy answer does not depend on whether its lane decoded alone; with one lane
 *     only the decode that ends a prompt is, so the answer does not depend on how the prompt was cut into chunks. The
 *     cost: a session alone on an engine with lanes steps about 2.3x slower than on a 1-lane engine on the bench's F16
 *     model with one generation thread; with one lane, one row once per request.
 * @param streams whether a library with the vendored API gives each lane its own KV stream
 *     ({@code -Doam.llama.streams=false} shares one). With streams a lane's cells and the attention over them are its
 *     own whatever the other lanes hold, so a greedy answer does not depend on them. llama.cpp then cuts a batch into
 *     micro-batches of lanes with consecutive ids and as many rows each: the batch is ordered by lane and a lane
 *     between two lanes in the batch gets a gap row (removed after the decode), so the lanes' rows are computed in one
 *     product.
 * @param repack whether ggml may keep quantised weights in its repacked layouts ({@code -Doam.llama.repack=true}; on
 *     the vendored library with streams they stay off otherwise). Their kernels compute groups of four rows otherwise
 *     than a row alone, so a lane's numbers would depend on how many lanes decode with it. For the same reason
 *     {@code LlamaNative} turns off that library's tiled K-quant product. Without both, a quantised product of several
 *     rows is each row's own dot products.
 * @param flashAttention flash attention on ({@code true}) or off ({@code false}), or null for the default, which is on
 *     with more than one lane ({@code -Doam.llama.flashAttn=true|false}): see {@link #flashAttention(EngineSettings)}
 * @param decodeTargetMillis what one decode should take at most, so a request arriving (or a lane freed by a cancel)
 *     waits little; {@code -Doam.llama.decodeTargetMs=0} turns the target off (fixed chunks, for comparison)
 * @param grammar which grammar implementation constrains a request ({@value #GRAMMAR_VARIABLE} or
 *     {@value #GRAMMAR_PROPERTY}: {@code java}, the default, or {@code native})
 */
public record FfmTuning(
        boolean forced,
        boolean pad,
        boolean streams,
        boolean repack,
        @Nullable Boolean flashAttention,
        double decodeTargetMillis,
        Grammar grammar) {
    public static final String GRAMMAR_VARIABLE = "OAM_LLAMA_GRAMMAR";
    public static final String GRAMMAR_PROPERTY = "oam.llama.grammar";
    /** The default of {@link #decodeTargetMillis}. */
    public static final double DECODE_TARGET_MS = 100;
    /** Every switch at its default, the Java grammar. */
    public static final FfmTuning DEFAULTS =
            new FfmTuning(true, true, true, false, null, DECODE_TARGET_MS, Grammar.JAVA);

    /** The grammar implementations of the FFM engine. */
    public enum Grammar {
        /** The Java compiler over the model's vocabulary ({@code dev.oam.model.llama.grammar}). */
        JAVA,
        /** llama.cpp's own grammar sampler: slow on large vocabularies; an explicit fallback. */
        NATIVE
    }

    /**
     * The tuning {@code environment}'s system properties and variables ask for; unset switches keep their defaults, and
     * a {@code decodeTargetMs} that is not a number is logged and the default used.
     */
    public static FfmTuning read(Environment environment) {
        String flash = environment.property("oam.llama.flashAttn");
        String target = environment.property("oam.llama.decodeTargetMs");
        double decodeTarget = DECODE_TARGET_MS;
        if (target != null) {
            try {
                decodeTarget = Double.parseDouble(target);
            } catch (NumberFormatException e) {
                Log.warning("oam.llama.decodeTargetMs is not a number (" + e.getMessage() + "); using the default");
            }
        }
        return new FfmTuning(
                !"false".equals(environment.property("oam.llama.forced")),
                !"false".equals(environment.property("oam.llama.pad")),
                !"false".equals(environment.property("oam.llama.streams")),
                "true".equals(environment.property("oam.llama.repack")),
                flash == null ? null : !"false".equals(flash),
                decodeTarget,
                grammar(environment));
    }

    /**
     * The grammar {@value #GRAMMAR_PROPERTY} (else {@value #GRAMMAR_VARIABLE}) asks for: {@code java} (the default) or
     * {@code native}. Anything else is logged and the default used.
     */
    static Grammar grammar(Environment environment) {
        String value = environment.property(GRAMMAR_PROPERTY);
        if (value == null || value.isBlank()) {
            value = environment.variable(GRAMMAR_VARIABLE);
        }
        if (value == null || value.isBlank() || value.strip().equalsIgnoreCase("java")) {
            return Grammar.JAVA;
        }
        if (value.strip().equalsIgnoreCase("native")) {
            return Grammar.NATIVE;
        }
        Log.warning(GRAMMAR_VARIABLE + "='" + value + "': use java or native; using java");
        return Grammar.JAVA;
    }

    public FfmTuning withForced(boolean on) {
        return new FfmTuning(on, pad, streams, repack, flashAttention, decodeTargetMillis, grammar);
    }

    public FfmTuning withFlashAttention(@Nullable Boolean on) {
        return new FfmTuning(forced, pad, streams, repack, on, decodeTargetMillis, grammar);
    }

    public FfmTuning withGrammar(Grammar implementation) {
        return new FfmTuning(forced, pad, streams, repack, flashAttention, decodeTargetMillis, implementation);
    }

    /**
     * Whether a context for {@code settings} uses flash attention: as asked, else with more than one lane. llama.cpp's
     * CPU kernel skips the cells a row may not see, so a lane attends over its own cells only (without it, over every
     * cell any lane holds: lanes with long prompts slowed every lane about 1.4x), and it adds a lane's cells in their
     * order whatever lies between them, so where a lane's cells sit in the shared cache does not change its numbers.
     * With one lane there is nothing to skip, and on the project-built llama.cpp (0.3.36) the kernel made an NPC turn
     * on SmolLM2-135M 2.5x slower on 2 cores (first words 4.8 s against 1.3 s with a grounding tool, {@code bench/run
     * npc}), so one lane goes without.
     */
    public boolean flashAttention(EngineSettings settings) {
        return flashAttention != null ? flashAttention : settings.slots() > 1;
    }
}
