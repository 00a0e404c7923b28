package dev.oam.model.llama.ffm;

/**
 * The cost of one decode, {@code fixedMillis + rows × millisPerRow} as moving averages, and the prompt rows a decode
 * may take so it stays within the time target. The fixed part (reading the weights once) comes from one- and two-row
 * decodes, the per-row part from decodes of {@value #MIN_PREFILL} rows or more less the fixed part: dividing a whole
 * decode's time by its rows would count the fixed part in every row and shrink the chunks to the floor on a model whose
 * weights dominate. Decode thread only.
 */
final class CostModel {
    static final int PREFILL_BUDGET = 128;
    /** The fewest prompt tokens a decode takes, however slow the model or busy the machine. */
    static final int MIN_PREFILL = 16;
    /**
     * A prompt read alone may take decodes this many times longer than the target: fewer, larger chunks read a long
     * prompt faster, and a request arriving then waits for one of them.
     */
    static final double ALONE_FACTOR = 1.5;

    private final double targetMillis;
    private double fixedMillis = Double.NaN;
    private double millisPerRow = Double.NaN;

    /** {@code targetMillis} 0 or less: no target, every decode takes up to {@value #PREFILL_BUDGET} prompt rows. */
    CostModel(double targetMillis) {
        this.targetMillis = targetMillis;
    }

    /**
     * The prompt tokens this decode may take besides its {@code generating} one-token rows: as many as fit in the
     * target by the measured cost when other requests share the model ({@value #ALONE_FACTOR} times that for a prompt
     * read alone), at least {@value #MIN_PREFILL} and at most {@value #PREFILL_BUDGET}, so the decode a cancelled or
     * newly arrived request waits for stays short on a slow model; {@value #MIN_PREFILL} until a decode of that many
     * rows was measured.
     */
    int prefillBudget(int generating, boolean shared) {
        if (targetMillis <= 0) {
            return PREFILL_BUDGET;
        }
        return prefillBudget(fixedMillis, millisPerRow, (shared ? 1 : ALONE_FACTOR) * targetMillis, generating);
    }

    /** The arithmetic of {@link #prefillBudget(int, boolean)}: rows that fit in {@code targetMillis}, clamped. */
    static int prefillBudget(double fixedMillis, double millisPerRow, double targetMillis, int generating) {
        if (Double.isNaN(millisPerRow) || millisPerRow <= 0) {
            return MIN_PREFILL;
        }
        double fit = (targetMillis - (Double.isNaN(fixedMillis) ? 0 : fixedMillis)) / millisPerRow - generating;
        return (int) Math.max(MIN_PREFILL, Math.min(PREFILL_BUDGET, fit));
    }

    /** Updates the model with a decode of {@code rows} rows that took {@code millis}. */
    void measured(int rows, double millis) {
        if (rows <= 2) {
            fixedMillis = Double.isNaN(fixedMillis) ? millis : 0.8 * fixedMillis + 0.2 * millis;
        } else if (rows >= MIN_PREFILL) { // until a small decode measured the fixed part, all of it counts per row
            double perRow = Math.max(0.01, (millis - (Double.isNaN(fixedMillis) ? 0 : fixedMillis)) / rows);
            // Up at once, down slowly: a row gets dearer as the lanes hold more cells (b4916 attends over all of them),
            // and an estimate that lags upwards makes the next decode overshoot the target that a cancel waits for.
            millisPerRow =
                    Double.isNaN(millisPerRow) || perRow > millisPerRow ? perRow : 0.7 * millisPerRow + 0.3 * perRow;
        }
    }
}
