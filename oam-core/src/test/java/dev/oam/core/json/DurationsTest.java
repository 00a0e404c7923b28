package dev.oam.core.json;

import static org.assertj.core.api.Assertions.assertThat;

import java.math.BigDecimal;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {
    @Test
    void secondsAreWrittenPlainWithoutTrailingZeros() {
        assertThat(Durations.seconds(Duration.ofSeconds(120))).isEqualTo("120");
        assertThat(Durations.seconds(Duration.ofMillis(200))).isEqualTo("0.2");
        assertThat(Durations.seconds(Duration.ofMillis(1500))).isEqualTo("1.5");
        assertThat(Durations.seconds(Duration.ofNanos(1))).isEqualTo("0.000000001");
        assertThat(Durations.seconds(Duration.ZERO)).isEqualTo("0");
    }

    @Test
    void theNumberFormIsWrittenToJsonWithoutAnExponent() {
        assertThat(Durations.secondsValue(Duration.ofSeconds(120))).isEqualTo(new BigDecimal("120"));
        assertThat(Json.object()
                        .put("s", Durations.secondsValue(Duration.ofSeconds(86_400)))
                        .toString())
                .isEqualTo("{\"s\":86400}");
        assertThat(Json.object()
                        .put("s", Durations.secondsValue(Duration.ofMillis(50)))
                        .toString())
                .isEqualTo("{\"s\":0.05}");
    }
}
