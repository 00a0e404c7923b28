package dev.oam.core.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.oam.core.model.Usage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Option values, their protocol defaults, and how durations are written in messages. */
class AgentOptionsTest {
    @Test
    void defaultsAreThoseOfTheSessionCreateTable() {
        AgentOptions options = AgentOptions.defaults();

        assertThat(options.toolChoice()).isEqualTo(ToolChoice.AUTO);
        assertThat(options.maxToolRounds()).isEqualTo(4);
        assertThat(options.maxToolCalls()).isEqualTo(12);
        assertThat(options.enabledTools()).isNull();
        assertThat(options.temperature()).isNull();
        assertThat(options.maxResponseTokens()).isNull();
        assertThat(options.sampling()).isNull();
        assertThat(options.toolTimeout()).isEqualTo(Duration.ofSeconds(120));
        assertThat(options.trimHistory()).isTrue();
        assertThat(options.reservedResponseTokens()).isEqualTo(1024);
        assertThat(options.maxAttempts()).isEqualTo(2);
    }

    @Test
    void negativeCountsAndZeroAttemptsAreRejected() {
        Duration timeout = Duration.ofSeconds(1);
        assertThatThrownBy(
                        () -> new AgentOptions(ToolChoice.AUTO, -1, 12, null, null, null, null, timeout, true, 1024, 2))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(
                        () -> new AgentOptions(ToolChoice.AUTO, 4, -1, null, null, null, null, timeout, true, 1024, 2))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new AgentOptions(ToolChoice.AUTO, 4, 12, null, null, null, null, timeout, true, -1, 2))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(
                        () -> new AgentOptions(ToolChoice.AUTO, 4, 12, null, null, null, null, timeout, true, 1024, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxAttempts");
    }

    @Test
    void enabledToolsAreCopied() {
        List<String> names = new ArrayList<>(List.of("open_gate"));
        AgentOptions options =
                new AgentOptions(ToolChoice.AUTO, 4, 12, names, null, null, null, Duration.ZERO, true, 1024, 2);

        names.add("ring_bell");

        assertThat(options.enabledTools()).containsExactly("open_gate");
    }

    @Test
    void turnPolicyTakesTheSteeringOptions() {
        AgentOptions options = new AgentOptions(
                ToolChoice.REQUIRED, 2, 3, List.of("a"), null, null, null, Duration.ZERO, true, 1024, 2);

        assertThat(TurnPolicy.of(options)).isEqualTo(new TurnPolicy(ToolChoice.REQUIRED, 2, 3, List.of("a")));
    }

    @Test
    void secondsAreWrittenAsAPersonWouldWriteThem() {
        assertThat(dev.oam.core.json.Durations.seconds(Duration.ofSeconds(120))).isEqualTo("120");
        assertThat(dev.oam.core.json.Durations.seconds(Duration.ofSeconds(86_400)))
                .isEqualTo("86400");
        assertThat(dev.oam.core.json.Durations.seconds(Duration.ofMillis(200))).isEqualTo("0.2");
        assertThat(dev.oam.core.json.Durations.seconds(Duration.ofMillis(1500))).isEqualTo("1.5");
        assertThat(dev.oam.core.json.Durations.seconds(Duration.ofMillis(50))).isEqualTo("0.05");
        assertThat(dev.oam.core.json.Durations.seconds(Duration.ofSeconds(1))).isEqualTo("1");
    }

    @Test
    void usageAddsEveryCountAndTotalsInputAndOutput() {
        Usage sum = new Usage(10, 4, 3).plus(new Usage(5, 5, 2));

        assertThat(sum).isEqualTo(new Usage(15, 9, 5));
        assertThat(sum.totalTokens()).isEqualTo(20);
        assertThat(Usage.ZERO.plus(sum)).isEqualTo(sum);
    }
}
