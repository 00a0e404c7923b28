package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code oam available}, {@code schema convert}, {@code tools validate}, {@code agent-readme} and {@code demo tavern}
 * through bin/oam.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class InfoCommandsIT {
    @TempDir
    Path dir;

    private CliRun oam() {
        return new CliRun(dir);
    }

    @Test
    void availableIsJsonAndExitThreeWithoutAModel() throws Exception {
        CliRun.Result scripted = oam().script("[]").run("available");
        assertThat(scripted.exit()).as(scripted.toString()).isZero();
        JsonNode json = scripted.json();
        assertThat(json.path("available").asBoolean()).isTrue();
        assertThat(json.path("model").asText()).isEqualTo("scripted");
        assertThat(json.path("contextSize").asInt()).isEqualTo(8192);
        assertThat(json.has("supportedLanguages")).isTrue();
        assertThat(scripted.out()).contains("\n  \"available\": true");
        CliRun.Result compact = oam().script("[]").run("available", "--compact");
        assertThat(compact.out().strip()).doesNotContain("\n").startsWith("{\"available\":true");
        CliRun.Result none = oam().run("available");
        assertThat(none.exit()).isEqualTo(3);
        assertThat(none.json().path("available").asBoolean()).isFalse();
        assertThat(none.json().path("reason").asText()).isEqualTo("model_not_ready");
    }

    @Test
    void schemaConvertPrintsWarningsAndTheSchema() throws Exception {
        Path schema = dir.resolve("s.json");
        Files.writeString(
                schema,
                "{\"type\":\"object\",\"properties\":{\"code\":{\"type\":\"string\",\"pattern\":\"^[A-Z]+$\"},"
                        + "\"n\":{\"type\":\"integer\"}},\"required\":[\"code\",\"n\"]}");
        CliRun.Result text = oam().run("schema", "convert", schema.toString());
        assertThat(text.exit()).as(text.toString()).isZero();
        assertThat(text.out()).contains("pattern");
        CliRun.Result json = oam().stdin("{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}}")
                .run("schema", "convert", "-", "--json", "--name", "Thing");
        assertThat(json.exit()).as(json.toString()).isZero();
        assertThat(json.json().path("warnings").isArray()).isTrue();
        assertThat(json.json().path("generationSchema").isObject()).isTrue();
        CliRun.Result plain = oam().stdin("{\"type\":\"string\"}").run("schema", "convert", "-");
        assertThat(plain.out()).startsWith("No warnings\n");
        Files.writeString(schema, "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"nonsense\"}}}");
        CliRun.Result bad = oam().run("schema", "convert", schema.toString());
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains(schema.toString()).contains("#/properties/x");
    }

    @Test
    void toolsValidateDescribesEachTool() throws Exception {
        Path file = dir.resolve("tools.json");
        Files.writeString(
                file,
                "[{\"type\":\"function\",\"function\":{\"name\":\"ext\",\"description\":\"External.\",\"parameters\":{\"type\":\"object\","
                        + "\"properties\":{\"q\":{\"type\":\"string\"}}}}},{\"name\":\"echo\",\"description\":\"Runs echo.\",\"parameters\":{\"type\":\"object\","
                        + "\"properties\":{}},\"x-oam\":{\"command\":[\"echo\",\"hi\"],\"timeout\":5,\"cwd\":\".\"}}]");
        CliRun.Result r = oam().run("tools", "validate", file.toString(), "--json");
        assertThat(r.exit()).as(r.toString()).isZero();
        JsonNode tools = r.json().path("tools");
        assertThat(tools.get(0).path("kind").asText()).isEqualTo("external");
        assertThat(tools.get(1).path("kind").asText()).isEqualTo("command");
        assertThat(tools.get(1).path("argv").get(0).asText()).isEqualTo("echo");
        assertThat(tools.get(1).path("cwd").asText()).isEqualTo(dir.toString());
        assertThat(tools.get(1).path("timeoutSeconds").asDouble()).isEqualTo(5.0);
        assertThat(tools.get(1).path("generationSchema").isObject()).isTrue();
        CliRun.Result text = oam().run("tools", "validate", file.toString());
        assertThat(text.out())
                .contains("ext (external)")
                .contains("echo (command)")
                .contains("2 tools, valid");
        Files.writeString(
                file, "[{\"name\":\"a\",\"parameters\":{\"type\":\"object\",\"properties\":{}}},{\"name\":\"a\"}]");
        CliRun.Result duplicate = oam().run("tools", "validate", file.toString());
        assertThat(duplicate.exit()).isEqualTo(2);
        assertThat(duplicate.err()).contains("'a'");
    }

    @Test
    void agentReadmeIsTextOrJson() throws Exception {
        CliRun.Result text = oam().run("agent-readme");
        assertThat(text.exit()).isZero();
        assertThat(text.out())
                .contains("exit-10 loop")
                .contains("OAM_SCRIPT")
                .contains("NO_COLOR")
                .contains("--tool-output");
        CliRun.Result json = oam().run("agent-readme", "--json");
        assertThat(json.json().path("exitCodes").path("10").asText()).contains("tool calls pending");
        assertThat(json.json().path("commands")).isNotEmpty();
    }

    @Test
    void theTavernDemoPlaysOnItsOwnScript() throws Exception {
        // an empty model cache: the default model, when the machine's cache holds it, is the demo's model otherwise
        String emptyCache = dir.resolve("empty-cache").toString();
        CliRun.Result r = oam().env("OAM_MODEL_CACHE", emptyCache).run("demo", "tavern", "--auto");
        assertThat(r.exit()).as(r.toString()).isZero();
        assertThat(r.out())
                .contains("(the demo's own scripted model: no system model is configured or cached")
                .contains("Mira: ")
                .contains("⚙ check_menu")
                .contains("⚙ take_order")
                .contains("gold: 30 → 25")
                .contains("Closing time. Mira decides: full_price")
                .contains("3 turns");
        assertThat(r.out()).doesNotContain("\u001b[");
        CliRun.Result lines =
                oam().env("OAM_MODEL_CACHE", emptyCache).run("demo", "tavern", "--line", "Hello!", "--max-turns", "1");
        assertThat(lines.exit()).as(lines.toString()).isZero();
        assertThat(lines.out()).contains("> Hello!").contains("1 turns");
    }
}
