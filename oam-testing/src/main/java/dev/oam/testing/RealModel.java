package dev.oam.testing;

import java.nio.file.Path;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The real model files the real-model suites run on, with what a suite may expect of each file (never of its wording).
 * Every real-model suite runs on both: the base model without a template, whose turns the bridge writes in a format it
 * knows, and the instruction-tuned model with its own template, the path real users take.
 */
public enum RealModel {
    /** Gemma 3 270M Q4_K_M, the base model: no chat template, so the bridge writes Gemma's turns and warns. */
    GEMMA(
            "Gemma 3 270M",
            "gemma-3-270m",
            "Gemma 3 270m",
            RealModels.GEMMA_VARIABLE,
            RealModels::gemma,
            false,
            "Gemma turn format",
            "<start_of_turn>"),
    /** SmolLM2-135M-Instruct Q4_1 with its own ChatML template: no warning about the turn format. */
    SMOLLM2(
            "SmolLM2 135M Instruct",
            "smollm2-135m-instruct",
            "Smollm2 135M 8k Lc100K Mix1 Ep2",
            RealModels.SMOLLM2_VARIABLE,
            RealModels::smollm2,
            true,
            null,
            null);

    private final String title;
    private final String id;
    private final String variant;
    private final String variable;
    private final Supplier<Path> path;
    private final boolean hasTemplate;
    private final @Nullable String turnFormat;
    private final @Nullable String turnMarker;

    RealModel(
            String title,
            String id,
            String variant,
            String variable,
            Supplier<Path> path,
            boolean hasTemplate,
            @Nullable String turnFormat,
            @Nullable String turnMarker) {
        this.title = title;
        this.id = id;
        this.variant = variant;
        this.variable = variable;
        this.path = path;
        this.hasTemplate = hasTemplate;
        this.turnFormat = turnFormat;
        this.turnMarker = turnMarker;
    }

    /** The file, installed on first use ({@link RealModels}); the suites never skip. */
    public Path path() {
        return path.get();
    }

    /** The file named by {@link #variable()}, or null when it is unset (for the suites that skip without it). */
    public @Nullable Path pathIfSet() {
        String given = System.getenv(variable);
        return given == null || given.isBlank() ? null : Path.of(given.strip());
    }

    /** For messages and display names: "Gemma 3 270M". */
    public String title() {
        return title;
    }

    /** A short lower-case id: the model name sent to a server, a file-name prefix. */
    public String id() {
        return id;
    }

    /** What {@code model/availability} reports as {@code variant}: the file's {@code general.name}. */
    public String variant() {
        return variant;
    }

    /** The environment variable {@code bin/test} sets to the file. */
    public String variable() {
        return variable;
    }

    /** Whether the file has its own chat template ({@code tokenizer.chat_template}); without one the bridge warns. */
    public boolean hasTemplate() {
        return hasTemplate;
    }

    /**
     * What the bridge's warning about a missing template names (the format it writes instead, and its turn marker),
     * empty for a file with a template, which gets no such warning.
     */
    public String[] turnFormatWarningNames() {
        return hasTemplate ? new String[0] : new String[] {turnFormat, turnMarker};
    }

    @Override
    public String toString() {
        return title;
    }
}
