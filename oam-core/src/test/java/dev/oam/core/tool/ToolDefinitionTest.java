package dev.oam.core.tool;

import static dev.oam.core.testing.Fixtures.object;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ToolDefinitionTest {
    private static final ObjectNode NO_ARGUMENTS = object("{\"type\": \"object\"}");

    @ParameterizedTest
    @ValueSource(
            strings = {
                "open_gate",
                "a",
                "gate.open",
                "gate-open",
                "Gate_2",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            })
    void nameOfOneToSixtyFourAllowedCharactersIsAccepted(String name) {
        assertThat(new ToolDefinition(name, null, NO_ARGUMENTS, null).name()).isEqualTo(name);
    }

    @ParameterizedTest
    @ValueSource(
            strings = {
                "",
                "open gate",
                "öffnen",
                "gate/open",
                "gate:open",
                "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            })
    void otherNamesAreRejected(String name) {
        assertThatThrownBy(() -> new ToolDefinition(name, null, NO_ARGUMENTS, null))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void parametersAreCopied() {
        ObjectNode parameters = object("{\"type\": \"object\"}");
        ToolDefinition tool = new ToolDefinition("open_gate", null, parameters, null);

        parameters.put("changed", true);

        assertThat(tool.parameters().has("changed")).isFalse();
    }

    @Test
    void ownTimeoutWinsOverTheSessionsIncludingZero() {
        Duration session = Duration.ofSeconds(120);

        assertThat(new ToolDefinition("a", null, NO_ARGUMENTS, null).effectiveTimeout(session))
                .isEqualTo(session);
        assertThat(new ToolDefinition("a", null, NO_ARGUMENTS, Duration.ofSeconds(30)).effectiveTimeout(session))
                .isEqualTo(Duration.ofSeconds(30));
        assertThat(new ToolDefinition("a", null, NO_ARGUMENTS, Duration.ZERO).effectiveTimeout(session))
                .isEqualTo(Duration.ZERO);
    }
}
