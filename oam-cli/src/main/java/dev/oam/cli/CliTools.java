package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.bridge.spi.ToolDefinitions;
import dev.oam.core.Environment;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolDefinition;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The tools of a command: OpenAI tool definitions from {@code --tools} files and {@code --tool-json}, where a tool with
 * an {@code x-oam} block is a command tool (run here as a child process) and one without is external (its output comes
 * from the caller: the exit-10 loop, {@code --ask-tools}, or the person at {@code oam chat}).
 */
record CliTools(List<Tool> tools, List<String> warnings, ArrayNode raw) {
    static final double DEFAULT_TIMEOUT_SECONDS = 30;
    static final int DEFAULT_MAX_OUTPUT_CHARS = 8000;
    static final CliTools NONE = new CliTools(List.of(), List.of(), Json.array());

    CliTools {
        tools = List.copyOf(tools);
        warnings = List.copyOf(warnings);
    }

    /** One tool; {@code command} is {@code null} for an external tool. */
    record Tool(ToolDefinition definition, @Nullable Command command) {
        String name() {
            return definition.name();
        }
    }

    /**
     * How a command tool runs. {@code argv} is resolved (a relative program against the tools file's folder, a bare
     * name on PATH); a string command is {@code /bin/sh -c STRING}.
     */
    record Command(List<String> argv, Path cwd, Map<String, String> env, Duration timeout, int maxOutputChars) {
        Command {
            argv = List.copyOf(argv);
            env = Map.copyOf(env);
        }
    }

    List<ToolDefinition> definitions() {
        return tools.stream().map(Tool::definition).toList();
    }

    @Nullable
    Tool find(String name) {
        return tools.stream()
                .filter(tool -> tool.name().equals(name))
                .findFirst()
                .orElse(null);
    }

    boolean hasExternal() {
        return tools.stream().anyMatch(tool -> tool.command() == null);
    }

    /** Reads a tools file ({@code -}: standard input). */
    static CliTools readFile(String file) throws CliError {
        String text;
        Path base;
        try {
            if (file.equals("-")) {
                text = new String(System.in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
                base = Path.of("").toAbsolutePath();
            } else {
                Path path = Path.of(file).toAbsolutePath();
                text = Files.readString(path);
                base = path.getParent();
            }
        } catch (IOException | java.nio.file.InvalidPathException e) {
            throw CliError.io("cannot read the tools file " + file + ": " + e.getMessage());
        }
        JsonNode node;
        try {
            node = Json.parse(text);
        } catch (IOException e) {
            throw CliError.invalidInput(file + ": not valid JSON: " + e.getMessage());
        }
        if (node.isObject() && node.has("tools")) {
            node = node.get("tools");
        }
        if (!node.isArray()) {
            throw CliError.invalidInput(
                    file + ": a tools file holds an array of tool definitions or {\"tools\": [...]}");
        }
        return parse((ArrayNode) node, base, file);
    }

    /** Reads one {@code --tool-json} definition (relative paths resolve against the working directory). */
    static ArrayNode readInline(List<String> definitions) throws CliError {
        ArrayNode all = Json.array();
        for (String definition : definitions) {
            try {
                JsonNode node = Json.parse(definition);
                if (node.isArray()) {
                    node.forEach(all::add);
                } else {
                    all.add(node);
                }
            } catch (IOException e) {
                throw CliError.invalidInput("--tool-json: not valid JSON: " + e.getMessage());
            }
        }
        return all;
    }

    /**
     * Parses definitions; every command must resolve (a missing program is exit 2 naming it).
     *
     * @param base the folder relative programs and {@code cwd} resolve against
     * @param source the file's name for messages
     */
    static CliTools parse(ArrayNode definitions, Path base, String source) throws CliError {
        ArrayNode plain = Json.array();
        List<@Nullable JsonNode> blocks = new ArrayList<>();
        ArrayNode raw = Json.array();
        for (int i = 0; i < definitions.size(); i++) {
            JsonNode entry = definitions.get(i);
            if (!entry.isObject()) {
                throw CliError.invalidInput(source + ": tools[" + i + "] must be a tool definition object");
            }
            ObjectNode copy = ((ObjectNode) entry).deepCopy();
            JsonNode block = copy.remove("x-oam");
            if (copy.path("function").isObject()) {
                JsonNode inner = ((ObjectNode) copy.get("function")).remove("x-oam");
                block = block != null ? block : inner;
            }
            blocks.add(block);
            plain.add(copy);
            ObjectNode saved = ((ObjectNode) entry).deepCopy();
            if (block != null && !saved.has("x-oam-base")) {
                saved.put("x-oam-base", base.toString()); // resolve the same way after a --resume
            }
            raw.add(saved);
        }
        ToolDefinitions.Parsed parsed;
        try {
            parsed = ToolDefinitions.parse(plain, "tools");
        } catch (BridgeException e) {
            throw new CliError(
                    e.code() == dev.oam.core.ErrorCode.INVALID_SCHEMA.code() ? "invalid_schema" : "invalid_input",
                    CliError.USAGE,
                    source + ": " + e.shortMessage());
        }
        List<Tool> tools = new ArrayList<>();
        for (int i = 0; i < parsed.tools().size(); i++) {
            ToolDefinition definition = parsed.tools().get(i);
            JsonNode block = blocks.get(i);
            Path toolBase = base;
            JsonNode savedBase = definitions.get(i).get("x-oam-base");
            if (savedBase != null && savedBase.isTextual()) {
                toolBase = Path.of(savedBase.textValue());
            }
            // The model never waits on the bridge's clock: command tools have their own timeout, external ones wait.
            ToolDefinition untimed = new ToolDefinition(
                    definition.name(),
                    definition.description(),
                    definition.parameters(),
                    Duration.ZERO,
                    definition.schema());
            tools.add(new Tool(untimed, block == null ? null : command(block, toolBase, source, definition.name())));
        }
        List<String> warnings = new ArrayList<>(parsed.warnings());
        ToolDefinitions.countWarning(tools.size()).ifPresent(warnings::add);
        return new CliTools(tools, warnings, raw);
    }

    /** Tools of several sources together; duplicate names are invalid input. */
    static CliTools merge(List<CliTools> parts) throws CliError {
        List<Tool> tools = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        ArrayNode raw = Json.array();
        Set<String> names = new HashSet<>();
        for (CliTools part : parts) {
            for (Tool tool : part.tools()) {
                if (!names.add(tool.name())) {
                    throw CliError.invalidInput(
                            "the tool name '" + tool.name() + "' is defined twice; tool names must be unique");
                }
                tools.add(tool);
            }
            warnings.addAll(part.warnings());
            part.raw().forEach(raw::add);
        }
        return new CliTools(tools, warnings, raw);
    }

    private static Command command(JsonNode block, Path base, String source, String tool) throws CliError {
        String at = source + ": tool '" + tool + "': x-oam";
        if (!block.isObject()) {
            throw CliError.invalidInput(at + " must be an object with a 'command'");
        }
        JsonNode commandNode = block.get("command");
        List<String> argv = new ArrayList<>();
        if (commandNode != null
                && commandNode.isTextual()
                && !commandNode.textValue().isBlank()) {
            argv.addAll(List.of("/bin/sh", "-c", commandNode.textValue()));
        } else if (commandNode != null && commandNode.isArray() && !commandNode.isEmpty()) {
            for (JsonNode part : commandNode) {
                if (!part.isTextual()) {
                    throw CliError.invalidInput(at + ".command must be an array of strings");
                }
                argv.add(part.textValue());
            }
        } else {
            throw CliError.invalidInput(at + ".command must be a non-empty argv array or a shell command string");
        }
        Path cwd = base;
        JsonNode cwdNode = block.get("cwd");
        if (cwdNode != null && !cwdNode.isNull()) {
            if (!cwdNode.isTextual()) {
                throw CliError.invalidInput(at + ".cwd must be a string");
            }
            cwd = base.resolve(cwdNode.textValue()).normalize();
            if (!Files.isDirectory(cwd)) {
                throw CliError.invalidInput(at + ".cwd: no such directory: " + cwd);
            }
        }
        argv.set(0, program(argv.get(0), base, at));
        Map<String, String> env = new LinkedHashMap<>();
        JsonNode envNode = block.get("env");
        if (envNode != null && !envNode.isNull()) {
            if (!envNode.isObject()) {
                throw CliError.invalidInput(at + ".env must be an object of strings");
            }
            for (Map.Entry<String, JsonNode> e : envNode.properties()) {
                if (!e.getValue().isValueNode() || e.getValue().isNull()) {
                    throw CliError.invalidInput(at + ".env." + e.getKey() + " must be a string");
                }
                env.put(e.getKey(), e.getValue().asText());
            }
        }
        double seconds = DEFAULT_TIMEOUT_SECONDS;
        JsonNode timeoutNode = block.get("timeout");
        if (timeoutNode != null && !timeoutNode.isNull()) {
            if (!timeoutNode.isNumber() || !(timeoutNode.doubleValue() > 0 && timeoutNode.doubleValue() <= 86_400)) {
                throw CliError.invalidInput(at + ".timeout must be a number of seconds above 0 and at most 86400");
            }
            seconds = timeoutNode.doubleValue();
        }
        int maxOutput = DEFAULT_MAX_OUTPUT_CHARS;
        JsonNode maxNode = block.get("maxOutputChars");
        if (maxNode != null && !maxNode.isNull()) {
            if (!maxNode.canConvertToInt() || maxNode.intValue() < 1 || !maxNode.isIntegralNumber()) {
                throw CliError.invalidInput(at + ".maxOutputChars must be a whole number of at least 1");
            }
            maxOutput = maxNode.intValue();
        }
        return new Command(argv, cwd, env, Duration.ofNanos((long) (seconds * 1e9)), maxOutput);
    }

    /** The program to run: a path with a slash resolves against {@code base}; a bare name is looked up on PATH. */
    private static String program(String program, Path base, String at) throws CliError {
        if (program.contains("/")) {
            Path path = base.resolve(program).normalize();
            if (!Files.isRegularFile(path)) {
                throw CliError.invalidInput(
                        at + ".command: the program " + program + " does not exist (looked for " + path + ")");
            }
            if (!Files.isExecutable(path)) {
                throw CliError.invalidInput(at + ".command: the program " + path + " is not executable");
            }
            return path.toString();
        }
        if (onPath(program, Main.process())) {
            return program; // as written: the child's PATH finds it the same way
        }
        throw CliError.invalidInput(at + ".command: the program '" + program + "' was not found on PATH");
    }

    /** Whether an executable {@code program} is in a folder of {@code environment}'s {@code PATH}. */
    static boolean onPath(String program, Environment environment) {
        String pathVariable = environment.variable("PATH");
        if (pathVariable != null) {
            for (String dir : pathVariable.split(":")) {
                if (dir.isEmpty()) {
                    continue;
                }
                Path candidate = Path.of(dir, program);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return true;
                }
            }
        }
        return false;
    }
}
