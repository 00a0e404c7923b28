package dev.oam.model.llama.ffm;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The prompt rows one FFM decode takes ({@link CostModel#prefillBudget}): what fits in the time target by a cost model
 * of a fixed part per decode plus a part per row, clamped to [16, 128].
 */
class CostModelTest {
    private static int budget(double fixedMillis, double millisPerRow, double targetMillis, int generating) {
        return CostModel.prefillBudget(fixedMillis, millisPerRow, targetMillis, generating);
    }

    @Test
    void theFixedPartOfADecodeIsPaidOnceNotPerRow() {
        // A model whose weights dominate: 28 ms a decode whatever its size, 3 ms a row. 100 ms fit 24 rows; dividing
        // a whole 16-row decode (76 ms) by its rows (4.75 ms a row) would have given 21, and at 8 generating rows 13,
        // clamped to the floor.
        assertThat(budget(28, 3, 100, 0)).isEqualTo(24);
        assertThat(budget(28, 3, 100, 8)).isEqualTo(16);
        assertThat(budget(10, 1, 100, 8)).isEqualTo(82);
    }

    @Test
    void theBudgetStaysWithinItsBounds() {
        assertThat(budget(500, 20, 100, 0))
                .as("a decode slower than the target")
                .isEqualTo(16);
        assertThat(budget(1, 0.1, 250, 0)).as("a fast model").isEqualTo(128);
        assertThat(budget(Double.NaN, Double.NaN, 100, 0))
                .as("nothing measured yet")
                .isEqualTo(16);
        assertThat(budget(Double.NaN, 2, 100, 0))
                .as("no small decode measured: all of it per row")
                .isEqualTo(50);
    }
}
