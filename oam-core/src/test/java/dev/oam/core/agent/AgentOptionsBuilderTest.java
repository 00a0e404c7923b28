package dev.oam.core.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class AgentOptionsBuilderTest {
    @Test
    void aBuilderStartsFromTheDefaultsAndChangesOnlyWhatItIsTold() {
        AgentOptions built = AgentOptions.builder()
                .toolChoice(ToolChoice.REQUIRED)
                .maxToolRounds(2)
                .temperature(0.3)
                .build();
        AgentOptions d = AgentOptions.defaults();
        assertThat(built.toolChoice()).isEqualTo(ToolChoice.REQUIRED);
        assertThat(built.maxToolRounds()).isEqualTo(2);
        assertThat(built.temperature()).isEqualTo(0.3);
        assertThat(built)
                .usingRecursiveComparison()
                .ignoringFields("toolChoice", "maxToolRounds", "temperature")
                .isEqualTo(d);
        assertThat(d.toBuilder().build()).isEqualTo(d);
    }

    @Test
    void theBuilderChecksWhatTheConstructorChecksAndCopiesLists() {
        assertThatThrownBy(() -> AgentOptions.builder().maxAttempts(0).build())
                .isInstanceOf(IllegalArgumentException.class);
        List<String> tools = new java.util.ArrayList<>(List.of("open_gate"));
        AgentOptions built = AgentOptions.builder()
                .enabledTools(tools)
                .toolTimeout(Duration.ZERO)
                .build();
        tools.add("later");
        assertThat(built.enabledTools()).containsExactly("open_gate");
        assertThat(built.toolTimeout()).isZero();
    }
}
