package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.oam.core.json.Json;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/** A tools file's errors name the member in the CLI's words, taken from the error itself (no wire text cut apart). */
class CliToolsTest {
    private static ArrayNode tools(String json) throws Exception {
        return (ArrayNode) Json.parse(json);
    }

    @Test
    void aDuplicateNameIsReportedWithItsMemberAndNoWireWording() throws Exception {
        ArrayNode definitions =
                tools("[{\"name\":\"look\",\"description\":\"d\"},{\"name\":\"look\",\"description\":\"d\"}]");
        assertThatThrownBy(() -> CliTools.parse(definitions, Path.of("."), "tools.json"))
                .isInstanceOf(CliError.class)
                .hasMessage(
                        "tools.json: 'tools[1].name': the tool name 'look' is used twice; tool names must be unique.");
    }

    @Test
    void aMissingNameAndABadTimeoutToo() throws Exception {
        assertThatThrownBy(() -> CliTools.parse(tools("[{\"description\":\"d\"}]"), Path.of("."), "t.json"))
                .hasMessage("t.json: 'tools[0].name' is missing.");
        assertThatThrownBy(
                        () -> CliTools.parse(tools("[{\"name\":\"a\",\"timeoutSeconds\":-1}]"), Path.of("."), "t.json"))
                .hasMessage(
                        "t.json: 'tools[0].timeoutSeconds' must be a number of seconds from 0 to 86400 (0 means no limit).");
    }
}
