package dev.oam.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code oam respond} end to end through {@code bin/oam} on the scripted model (OAM_SCRIPT). */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class RespondCommandIT {
    @TempDir
    Path dir;

    private static final String WEATHER =
            "{\"type\":\"function\",\"function\":{\"name\":\"weather\",\"description\":\"The weather in a city.\","
                    + "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}";

    private CliRun oam() {
        return new CliRun(dir);
    }

    /** A tools file: an external weather tool and a command tool {@code add} that runs add.sh next to the file. */
    private Path tools() throws Exception {
        Path bin = Files.createDirectories(dir.resolve("tools"));
        Path add = bin.resolve("add.sh");
        Files.writeString(
                add,
                "#!/bin/sh\n# arguments arrive on stdin and in $OAM_TOOL_ARGUMENTS\n"
                        + "python3 -c 'import json,os,sys; a=json.load(sys.stdin); e=json.loads(os.environ[\"OAM_TOOL_ARGUMENTS\"]); "
                        + "print(json.dumps({\"sum\": a[\"a\"]+a[\"b\"], \"same\": a==e, \"tool\": os.environ[\"OAM_TOOL_NAME\"], "
                        + "\"id\": os.environ[\"OAM_TOOL_CALL_ID\"]}))'\n");
        add.toFile().setExecutable(true);
        Path file = bin.resolve("tools.json");
        Files.writeString(
                file,
                "{\"tools\":[" + WEATHER
                        + ",{\"type\":\"function\",\"function\":{\"name\":\"add\",\"description\":\"Adds.\","
                        + "\"parameters\":{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"number\"},\"b\":{\"type\":\"number\"}},"
                        + "\"required\":[\"a\",\"b\"]}},\"x-oam\":{\"command\":[\"./add.sh\"],\"timeout\":20}}]}");
        return file;
    }

    @Test
    void answersOnStdoutAndNothingElse() throws Exception {
        CliRun.Result r =
                oam().script("[{\"text\":\"Hello there.\",\"chunks\":3}]").run("respond", "Say", "hello");
        assertThat(r.exit()).as(r.toString()).isZero();
        assertThat(r.out()).isEqualTo("Hello there.\n");
        assertThat(r.err()).isEmpty();
    }

    @Test
    void thePromptIsTheArgumentsThenPipedStdin() throws Exception {
        CliRun.Result r = oam().script("[{\"template\":\"[{prompt}]\"}]")
                .stdin("from the pipe\n")
                .run("respond", "two", "words");
        assertThat(r.exit()).as(r.toString()).isZero();
        assertThat(r.out()).isEqualTo("[two words\n\nfrom the pipe]\n");
        CliRun.Result alone = oam().script("[{\"template\":\"[{prompt}]\"}]")
                .stdin("only stdin")
                .run("respond");
        assertThat(alone.out()).isEqualTo("[only stdin]\n");
        CliRun.Result ignored = oam().script("[{\"template\":\"[{prompt}]\"}]")
                .stdin("not read")
                .run("respond", "--no-stdin", "args");
        assertThat(ignored.out()).isEqualTo("[args]\n");
    }

    @Test
    void usageErrorsExitTwoOnStderr() throws Exception {
        CliRun.Result none = oam().script("[]").run("respond");
        assertThat(none.exit()).isEqualTo(2);
        assertThat(none.out()).isEmpty();
        assertThat(none.err()).startsWith("Error: no prompt");
        CliRun.Result both = oam().script("[]").run("respond", "--json", "--events", "hi");
        assertThat(both.exit()).isEqualTo(2);
        assertThat(both.errJson().path("error").path("code").asText()).isEqualTo("usage");
        assertThat(oam().script("[]")
                        .run("respond", "--tool-output", "x=1", "hi")
                        .exit())
                .isEqualTo(2);
        assertThat(oam().script("[]").run("respond", "--temperature", "3", "hi").exit())
                .isEqualTo(2);
        assertThat(oam().script("[]").run("respond", "--max-tokens", "0", "hi").exit())
                .isEqualTo(2);
        CliRun.Result choice = oam().script("[]").run("respond", "--tool-json", WEATHER, "--tool-choice", "nope", "hi");
        assertThat(choice.exit()).isEqualTo(2);
        assertThat(choice.err()).contains("nope").contains("weather");
        assertThat(oam().script("[]")
                        .run("respond", "--tool-choice", "required", "hi")
                        .exit())
                .isEqualTo(2);
        CliRun.Result ask = oam().script("[]").run("respond", "--ask-tools", "hi");
        assertThat(ask.exit()).isEqualTo(2);
        assertThat(ask.err()).contains("--ask-tools needs a terminal");
    }

    /**
     * docs/CLI.md, "Compared with the original CLI", rows 2, 8 and 11: `--image` refused, `any` as `required`'s alias,
     * `explicit`, `--no-stream`.
     */
    @Test
    void toolChoiceAliasesExplicitNoStreamAndImagesBehaveAsDocumented() throws Exception {
        CliRun.Result image = oam().script("[]")
                .run("respond", "--image", dir.resolve("a.png").toString(), "describe it");
        assertThat(image.exit()).isEqualTo(2);
        assertThat(image.out()).isEmpty();
        assertThat(image.err()).startsWith("Error: --image").contains("text only");

        CliRun.Result anyWithout = oam().script("[]").run("respond", "--tool-choice", "any", "hi");
        assertThat(anyWithout.exit()).isEqualTo(2);
        assertThat(anyWithout.err()).contains("--tool-choice any needs tools");
        Path tools = tools();
        String addThenAnswer =
                "[{\"toolCalls\":[{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}]},{\"text\":\"3\"}]";
        JsonNode any = oam().script(addThenAnswer)
                .run("respond", "--tools", tools.toString(), "--tool-choice", "any", "--json", "1+2")
                .json();
        assertThat(any.path("steps"))
                .extracting(step -> step.path("toolCallingMode").asText())
                .containsExactly("required", "allowed");
        JsonNode auto = oam().script(addThenAnswer)
                .run("respond", "--tools", tools.toString(), "--json", "1+2")
                .json();
        assertThat(auto.path("steps").get(0).path("toolCallingMode").asText())
                .as("the default is auto")
                .isEqualTo("allowed");

        CliRun.Result explicit = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"respond_directly\"}]},{\"text\":\"Good evening.\"}]")
                .run("respond", "--tools", tools.toString(), "--tool-choice", "explicit", "--json", "evening");
        assertThat(explicit.exit()).as(explicit.toString()).isZero();
        assertThat(explicit.json().path("text").asText()).isEqualTo("Good evening.");
        assertThat(explicit.json().path("toolCalls"))
                .as("respond_directly is hidden, not a tool call")
                .isEmpty();
        assertThat(explicit.json().path("steps").get(0).path("toolCallingMode").asText())
                .isEqualTo("required");

        CliRun.Result whole =
                oam().script("[{\"text\":\"The gate is shut.\",\"chunks\":3}]").run("respond", "--no-stream", "gate?");
        assertThat(whole.exit()).as(whole.toString()).isZero();
        assertThat(whole.out()).isEqualTo("The gate is shut.\n");
        assertThat(whole.err()).isEmpty();
    }

    @Test
    void jsonHasTheWholeTurnWithACommandTool() throws Exception {
        Path tools = tools();
        CliRun.Result r = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"add\",\"arguments\":{\"a\":2,\"b\":3},\"id\":\"call_add\"}]},"
                                + "{\"template\":\"got {toolOutput}\"}]")
                .run("respond", "--tools", tools.toString(), "--json", "add 2 and 3");
        assertThat(r.exit()).as(r.toString()).isZero();
        JsonNode json = r.json();
        assertThat(json.path("status").asText()).isEqualTo("completed");
        JsonNode call = json.path("toolCalls").get(0);
        assertThat(call.path("call").path("name").asText()).isEqualTo("add");
        assertThat(call.path("output").path("sum").asInt()).isEqualTo(5);
        assertThat(call.path("output").path("same").asBoolean()).isTrue();
        assertThat(call.path("output").path("tool").asText()).isEqualTo("add");
        assertThat(call.path("output").path("id").asText()).isEqualTo("call_add");
        assertThat(call.path("isError").asBoolean()).isFalse();
        assertThat(call.has("durationSeconds")).isTrue();
        assertThat(json.path("text").asText()).contains("\"sum\":5");
        assertThat(json.path("usage").path("totalTokens").asInt()).isPositive();
        assertThat(json.path("steps")).hasSize(2);
        assertThat(json.path("steps").get(1).path("completedToolRounds").asInt())
                .isEqualTo(1);
        assertThat(r.err()).isEmpty();
    }

    @Test
    void eventsAreJsonLinesEndingWithCompleted() throws Exception {
        Path tools = tools();
        CliRun.Result r = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":1}}]},{\"text\":\"two\",\"chunks\":2}]")
                .run("respond", "--tools", tools.toString(), "--events", "1+1");
        assertThat(r.exit()).as(r.toString()).isZero();
        List<JsonNode> lines = r.lines();
        assertThat(lines)
                .extracting(l -> l.path("type").asText())
                .containsSubsequence(
                        "modelStep", "toolCallStarted", "toolCallCompleted", "modelStep", "text", "completed");
        assertThat(lines.stream()
                        .filter(l -> l.path("type").asText().equals("toolCallStarted"))
                        .findFirst()
                        .orElseThrow()
                        .path("execution")
                        .asText())
                .isEqualTo("local");
        JsonNode last = lines.get(lines.size() - 1);
        assertThat(last.path("type").asText()).isEqualTo("completed");
        assertThat(last.path("status").asText()).isEqualTo("completed");
        assertThat(last.path("text").asText()).isEqualTo("two");
    }

    @Test
    void externalToolsExitTenAndTheLoopRunsOverTwoResumes() throws Exception {
        Path tools = tools();
        // First run: the model calls the command tool and the external one in one round; the command still runs.
        CliRun.Result first = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2},\"id\":\"call_add\"},"
                                + "{\"name\":\"weather\",\"arguments\":{\"city\":\"Paris\"},\"id\":\"call_paris\"}]}]")
                .run("respond", "--tools", tools.toString(), "--max-tool-rounds", "3", "weather in Paris and Rome");
        assertThat(first.exit()).as(first.toString()).isEqualTo(10);
        JsonNode pending = first.json();
        assertThat(pending.path("status").asText()).isEqualTo("tool_calls");
        assertThat(pending.path("calls")).hasSize(1);
        assertThat(pending.path("calls").get(0).path("id").asText()).isEqualTo("call_paris");
        assertThat(pending.path("calls").get(0).path("arguments").path("city").asText())
                .isEqualTo("Paris");
        Path transcript = Path.of(pending.path("transcript").asText());
        assertThat(transcript).isAbsolute().exists();

        // Second run: the output is answered; the model asks for another external call: exit 10 again.
        CliRun.Result second = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"weather\",\"arguments\":{\"city\":\"Rome\"},\"id\":\"call_rome\"}]}]")
                .run("respond", "--resume", transcript.toString(), "--tool-output", "call_paris={\"sky\":\"rain\"}");
        assertThat(second.exit()).as(second.toString()).isEqualTo(10);
        JsonNode again = second.json();
        assertThat(again.path("calls").get(0).path("id").asText()).isEqualTo("call_rome");
        Path transcript2 = Path.of(again.path("transcript").asText());

        // Third run: an error output for Rome from a file; the model answers. The turn lists every call.
        Path errorFile = dir.resolve("rome.txt");
        Files.writeString(errorFile, "station offline");
        CliRun.Result third = oam().script("[{\"template\":\"{toolOutputs}\"}]")
                .run(
                        "respond",
                        "--resume",
                        transcript2.toString(),
                        "--tool-error",
                        "call_rome=@" + errorFile,
                        "--json");
        assertThat(third.exit()).as(third.toString()).isZero();
        JsonNode done = third.json();
        assertThat(done.path("toolCalls"))
                .extracting(c -> c.path("call").path("id").asText())
                .containsExactly("call_add", "call_paris", "call_rome");
        assertThat(done.path("toolCalls").get(1).path("output").path("sky").asText())
                .isEqualTo("rain");
        assertThat(done.path("toolCalls").get(2).path("isError").asBoolean()).isTrue();
        assertThat(done.path("text").asText()).contains("Error: station offline");
        assertThat(done.path("steps")).hasSize(3);
        assertThat(done.path("steps").get(2).path("completedToolRounds").asInt())
                .isEqualTo(2);
    }

    @Test
    void spentBudgetsCarryOverAResume() throws Exception {
        CliRun.Result first = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"weather\",\"arguments\":{\"city\":\"Oslo\"},\"id\":\"call_1\"}]}]")
                .run("respond", "--tool-json", WEATHER, "--max-tool-rounds", "1", "weather?");
        assertThat(first.exit()).as(first.toString()).isEqualTo(10);
        CliRun.Result second = oam().script("[{\"text\":\"cold\"}]")
                .run(
                        "respond",
                        "--resume",
                        first.json().path("transcript").asText(),
                        "--tool-output",
                        "call_1=snow",
                        "--json");
        assertThat(second.exit()).as(second.toString()).isZero();
        // the one round is spent: the continuation's step has tools disabled
        assertThat(second.json().path("steps").get(1).path("toolCallingMode").asText())
                .isEqualTo("disallowed");
    }

    @Test
    void aResumeNeedsExactlyOneOutputPerPendingCall() throws Exception {
        CliRun.Result first = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"weather\",\"arguments\":{\"city\":\"Oslo\"},\"id\":\"call_1\"},"
                                + "{\"name\":\"weather\",\"arguments\":{\"city\":\"Bergen\"},\"id\":\"call_2\"}]}]")
                .run("respond", "--tool-json", WEATHER, "weather?");
        assertThat(first.exit()).as(first.toString()).isEqualTo(10);
        String file = first.json().path("transcript").asText();
        CliRun.Result missing =
                oam().script("[]").run("respond", "--resume", file, "--tool-output", "call_1=snow", "--json");
        assertThat(missing.exit()).isEqualTo(2);
        assertThat(missing.out()).isEmpty();
        assertThat(missing.errJson().path("error").path("code").asText()).isEqualTo("missing_tool_output");
        assertThat(missing.errJson().path("error").path("message").asText()).contains("call_2");
        CliRun.Result unknown = oam().script("[]").run("respond", "--resume", file, "--tool-output", "call_9=x");
        assertThat(unknown.exit()).isEqualTo(2);
        CliRun.Result prompt = oam().script("[]")
                .run(
                        "respond",
                        "--resume",
                        file,
                        "--tool-output",
                        "call_1=a",
                        "--tool-output",
                        "call_2=b",
                        "a new prompt");
        assertThat(prompt.exit()).isEqualTo(2);
        assertThat(prompt.err()).contains("waiting for tool outputs");
        CliRun.Result fromStdin = oam().script("[{\"template\":\"{toolOutputs}\"}]")
                .stdin("[1,2]")
                .run("respond", "--resume", file, "--tool-output", "call_1=@-", "--tool-output", "call_2=sun");
        assertThat(fromStdin.exit()).as(fromStdin.toString()).isZero();
        assertThat(fromStdin.out()).isEqualTo("[1,2]\nsun\n");
    }

    @Test
    void aCommandToolThatHangsIsKilled() throws Exception {
        Path pidFile = dir.resolve("tool.pid");
        // The tool ignores SIGTERM (and so does its sleep, which inherits that): only SIGKILL stops it.
        String tool =
                "{\"type\":\"function\",\"function\":{\"name\":\"hang\",\"description\":\"Never ends.\",\"parameters\":{\"type\":\"object\","
                        + "\"properties\":{}}},\"x-oam\":{\"command\":\"echo $$ > " + pidFile
                        + "; trap '' TERM; sleep 600; echo late\",\"timeout\":0.5}}";
        CliRun.Result r = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"hang\",\"arguments\":{}}]},{\"template\":\"{toolOutput}\"}]")
                .run("respond", "--tool-json", tool, "--json", "go");
        assertThat(r.exit()).as(r.toString()).isZero();
        JsonNode record = r.json().path("toolCalls").get(0);
        assertThat(record.path("isError").asBoolean()).isTrue();
        assertThat(record.path("output").asText()).contains("timed out after 0.5s");
        long pid = Long.parseLong(Files.readString(pidFile).strip());
        assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                .as("the tool process is gone")
                .isFalse();
    }

    @Test
    void commandToolOutputIsTruncatedAndFailuresAreErrorOutputs() throws Exception {
        String loud =
                "{\"type\":\"function\",\"function\":{\"name\":\"loud\",\"parameters\":{\"type\":\"object\",\"properties\":{}}},"
                        + "\"x-oam\":{\"command\":[\"python3\",\"-c\",\"print('x'*100)\"],\"maxOutputChars\":10}}";
        String failing =
                "{\"type\":\"function\",\"function\":{\"name\":\"fails\",\"parameters\":{\"type\":\"object\",\"properties\":{}}},"
                        + "\"x-oam\":{\"command\":\"echo broken >&2; exit 3\"}}";
        CliRun.Result r = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"loud\",\"arguments\":{}},{\"name\":\"fails\",\"arguments\":{}}]},{\"text\":\"ok\"}]")
                .run("respond", "--tool-json", loud, "--tool-json", failing, "--json", "go");
        assertThat(r.exit()).as(r.toString()).isZero();
        JsonNode calls = r.json().path("toolCalls");
        JsonNode loudRecord =
                calls.get(0).path("call").path("name").asText().equals("loud") ? calls.get(0) : calls.get(1);
        JsonNode failRecord = loudRecord == calls.get(0) ? calls.get(1) : calls.get(0);
        assertThat(loudRecord.path("output").asText()).startsWith("xxxxxxxxxx\n[output truncated to 10 characters]");
        assertThat(failRecord.path("isError").asBoolean()).isTrue();
        assertThat(failRecord.path("output").asText()).contains("status 3").contains("broken");
    }

    @Test
    void aToolsFileWithAMissingCommandIsExitTwoNamingIt() throws Exception {
        Path file = dir.resolve("bad-tools.json");
        Files.writeString(
                file,
                "[{\"type\":\"function\",\"function\":{\"name\":\"gone\",\"parameters\":{\"type\":\"object\",\"properties\":{}}},"
                        + "\"x-oam\":{\"command\":[\"oam-no-such-program-x1\"]}}]");
        CliRun.Result r = oam().script("[]").run("respond", "--tools", file.toString(), "hi");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.out()).isEmpty();
        assertThat(r.err()).contains("oam-no-such-program-x1").contains("gone").contains(file.toString());
        CliRun.Result validate = oam().run("tools", "validate", file.toString());
        assertThat(validate.exit()).isEqualTo(2);
        assertThat(validate.err()).contains("oam-no-such-program-x1");
        Files.writeString(
                file,
                "[{\"type\":\"function\",\"function\":{\"name\":\"gone\",\"parameters\":{\"type\":\"object\",\"properties\":{}}},"
                        + "\"x-oam\":{\"command\":[\"./missing.sh\"]}}]");
        CliRun.Result relative = oam().script("[]").run("respond", "--tools", file.toString(), "hi");
        assertThat(relative.exit()).isEqualTo(2);
        assertThat(relative.err())
                .contains("./missing.sh")
                .contains(dir.resolve("missing.sh").toString());
    }

    @Test
    void modelErrorsMapToTheirExitCodes() throws Exception {
        String[][] cases = {
            {"guardrail_violation", "4"},
            {"refusal", "4"},
            {"context_size_exceeded", "5"},
            {"rate_limited", "6"},
            {"generation_failed", "1"},
            {"model_unavailable", "3"},
            {"unsupported_language", "2"}
        };
        for (String[] c : cases) {
            CliRun.Result text = oam().script("{\"steps\":[],\"fallback\":{\"error\":\"" + c[0] + "\"}}")
                    .run("respond", "hi");
            assertThat(text.exit()).as(c[0] + "\n" + text).isEqualTo(Integer.parseInt(c[1]));
            assertThat(text.out()).isEmpty();
            assertThat(text.err()).startsWith("Error: ");
            CliRun.Result json = oam().script("{\"steps\":[],\"fallback\":{\"error\":\"" + c[0] + "\"}}")
                    .run("respond", "--json", "hi");
            assertThat(json.errJson().path("error").path("code").asText()).isEqualTo(c[0]);
            assertThat(json.out()).isEmpty();
        }
        CliRun.Result events = oam().script("[{\"error\":\"refusal\"}]").run("respond", "--events", "hi");
        assertThat(events.exit()).isEqualTo(4);
        List<JsonNode> lines = events.lines();
        assertThat(lines.get(lines.size() - 1).path("type").asText()).isEqualTo("error");
        assertThat(lines.get(lines.size() - 1).path("error").path("code").asText())
                .isEqualTo("refusal");
        assertThat(events.errJson().path("error").path("code").asText()).isEqualTo("refusal");
    }

    @Test
    void noModelIsExitThree() throws Exception {
        CliRun.Result r = oam().run("respond", "hi");
        assertThat(r.exit()).as(r.toString()).isEqualTo(3);
        assertThat(r.err()).contains("No system model is configured");
    }

    @Test
    void aSchemaGivesIndentedJsonAndStructured() throws Exception {
        Path schema = dir.resolve("schema.json");
        Files.writeString(
                schema,
                "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"},\"age\":{\"type\":\"integer\"}},"
                        + "\"required\":[\"name\",\"age\"]}");
        String script = "[{\"json\":{\"age\":7,\"name\":\"Pip\"}}]";
        CliRun.Result text = oam().script(script).run("respond", "--schema", schema.toString(), "a cat");
        assertThat(text.exit()).as(text.toString()).isZero();
        assertThat(text.out()).isEqualTo("{\n  \"name\": \"Pip\",\n  \"age\": 7\n}\n");
        CliRun.Result json = oam().script(script).run("respond", "--schema", schema.toString(), "--json", "a cat");
        assertThat(json.json().path("structured").path("name").asText()).isEqualTo("Pip");
        Files.writeString(schema, "{\"type\":\"object\",\"properties\":{\"x\":{\"type\":\"nonsense\"}}}");
        CliRun.Result bad = oam().script(script).run("respond", "--schema", schema.toString(), "a cat");
        assertThat(bad.exit()).isEqualTo(2);
        assertThat(bad.err()).contains(schema.toString()).contains("#/properties/x");
    }

    @Test
    void aSavedConversationContinuesWithItsInstructionsAndTools() throws Exception {
        Path saved = dir.resolve("talk.json");
        CliRun.Result first = oam().script("[{\"text\":\"Hi Ann.\"}]")
                .run(
                        "respond",
                        "-i",
                        "Be brief.",
                        "--tool-json",
                        WEATHER,
                        "--save-transcript",
                        saved.toString(),
                        "I am Ann");
        assertThat(first.exit()).as(first.toString()).isZero();
        CliRun.Result second = oam().script(
                        "[{\"toolCalls\":[{\"name\":\"weather\",\"arguments\":{\"city\":\"Oslo\"},\"id\":\"c1\"}]}]")
                .run("respond", "--resume", saved.toString(), "--save-transcript", saved.toString(), "weather?");
        assertThat(second.exit()).as(second.toString()).isEqualTo(10); // the saved tools came along
        assertThat(second.json().path("transcript").asText()).isEqualTo(saved.toString());
        JsonNode file = Json.parse(Files.readString(saved));
        JsonNode entries = file.path("transcript").path("transcript").path("entries");
        assertThat(entries.get(0).path("role").asText()).isEqualTo("instructions");
        assertThat(entries.get(0).path("contents").get(0).path("text").asText()).isEqualTo("Be brief.");
        assertThat(entries)
                .extracting(e -> e.path("role").asText())
                .containsExactly("instructions", "user", "response", "user", "response");
        assertThat(file.path("oam")
                        .path("pending")
                        .path("calls")
                        .get(0)
                        .path("id")
                        .asText())
                .isEqualTo("c1");
    }
}
