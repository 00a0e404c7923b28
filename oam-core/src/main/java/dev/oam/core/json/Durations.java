package dev.oam.core.json;

import java.math.BigDecimal;
import java.time.Duration;

/**
 * Durations as the protocol and its messages write them: in seconds, as a plain decimal without trailing zeros
 * ({@code 120}, {@code 0.2}, {@code 1.5}), never in exponent form. Used for {@code …Seconds} members and for texts such
 * as "timed out after 0.2s".
 */
public final class Durations {
    private Durations() {}

    /** {@code duration} in seconds as written by a person: {@code 120}, {@code 0.2}. */
    public static String seconds(Duration duration) {
        return secondsValue(duration).toPlainString();
    }

    /** {@code duration} in seconds as an exact number, for a JSON member ({@code 0.2}, not {@code 0.200000000}). */
    public static BigDecimal secondsValue(Duration duration) {
        BigDecimal value = BigDecimal.valueOf(duration.getSeconds())
                .add(BigDecimal.valueOf(duration.getNano(), 9))
                .stripTrailingZeros();
        return value.scale() < 0 ? value.setScale(0) : value; // 120, not 1.2E+2
    }
}
