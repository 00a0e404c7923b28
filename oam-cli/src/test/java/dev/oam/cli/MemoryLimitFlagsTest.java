package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/** The {@code oam stdio} memory cap flags (docs/RELIABILITY.md, Limits) reach the engine. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MemoryLimitFlagsTest {
    @Test
    void sizesTakeBinarySuffixesAndRefuseNonsense() {
        assertThat(StdioCommand.size("4096", "--x")).isEqualTo(4096);
        assertThat(StdioCommand.size("512k", "--x")).isEqualTo(512 * 1024);
        assertThat(StdioCommand.size("16M", "--x")).isEqualTo(16L << 20);
        assertThat(StdioCommand.size("1G", "--x")).isEqualTo(1L << 30);
        for (String bad : List.of("", "M", "-1", "15", "1.5M", "12T", "99999999999G")) {
            assertThatThrownBy(() -> StdioCommand.size(bad, "--max-world-size"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("--max-world-size");
        }
    }

    @Test
    void theFlagsSetTheCapsOfTheServedEngine() throws Exception {
        StdioCommand command = new StdioCommand();
        new CommandLine(command).parseArgs("--max-world-size", "200", "--max-history-size", "1K");
        String big = "x".repeat(300);
        String input = String.join(
                        "\n",
                        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"world/create\",\"params\":{\"world\":\"w\"}}",
                        "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"world/set\",\"params\":{\"world\":\"w\",\"path\":\"a\",\"value\":\""
                                + big + "\"}}",
                        "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"session/create\",\"params\":{\"session\":\"s\",\"model\":\"scripted\"}}",
                        "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"session/respond\",\"params\":{\"session\":\"s\",\"prompt\":\""
                                + "p".repeat(2_000) + "\"}}")
                + "\n";
        ByteArrayOutputStream out = new ByteArrayOutputStream();

        int code = command.serve(new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)), out, "");

        assertThat(code).isZero();
        List<JsonNode> messages = new ArrayList<>();
        for (String line : out.toString(StandardCharsets.UTF_8).split("\n")) {
            messages.add(Json.parse(line));
        }
        JsonNode world = messages.stream()
                .filter(m -> m.path("id").asInt() == 2)
                .findFirst()
                .orElseThrow();
        assertThat(world.path("error").path("code").asInt()).isEqualTo(-32055);
        assertThat(world.path("error").path("data").path("limit").asLong()).isEqualTo(200);
        JsonNode turn = messages.stream()
                .filter(m -> m.path("id").asInt() == 4)
                .findFirst()
                .orElseThrow();
        assertThat(turn.path("error").path("code").asInt()).isEqualTo(-32004);
        assertThat(turn.path("error").path("data").path("limit").asLong()).isEqualTo(1024);
    }

    @Test
    void aBadSizeIsAUsageError() throws Exception {
        StdioCommand command = new StdioCommand();
        new CommandLine(command).parseArgs("--max-total-world-size", "lots");
        assertThat(command.serve(new ByteArrayInputStream(new byte[0]), new ByteArrayOutputStream(), ""))
                .isEqualTo(2);
    }
}
