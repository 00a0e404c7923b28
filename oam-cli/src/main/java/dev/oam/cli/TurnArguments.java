package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.json.Json;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.Sampling;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A turn's settings read from the command line and checked (sampling, tools, tool choice, schema, model), shared by
 * {@code oam respond} and {@code oam chat}; each bad value is a usage error (exit 2).
 */
final class TurnArguments {
    private TurnArguments() {}

    static void checkSampling(
            @Nullable Double temperature,
            @Nullable Integer maxTokens,
            @Nullable Integer rounds,
            @Nullable Integer calls)
            throws CliError {
        if (temperature != null && !(temperature >= 0 && temperature <= 2)) {
            throw CliError.usage("--temperature must be between 0 and 2");
        }
        if (maxTokens != null && maxTokens < 1) {
            throw CliError.usage("--max-tokens must be at least 1");
        }
        if (rounds != null && rounds < 0 || calls != null && calls < 0) {
            throw CliError.usage("--max-tool-rounds and --max-tool-calls must be 0 or more");
        }
    }

    static AgentOptions options(
            ToolChoice choice,
            @Nullable Integer rounds,
            @Nullable Integer calls,
            @Nullable Double temperature,
            @Nullable Integer maxTokens,
            boolean greedy) {
        AgentOptions d = AgentOptions.defaults(Duration.ZERO);
        return new AgentOptions(
                choice,
                rounds != null ? rounds : d.maxToolRounds(),
                calls != null ? calls : d.maxToolCalls(),
                null,
                temperature,
                maxTokens,
                greedy ? Sampling.GREEDY : null,
                Duration.ZERO,
                d.trimHistory(),
                d.reservedResponseTokens(),
                d.maxAttempts());
    }

    /** The prompt: the words joined with spaces, then piped standard input (not a terminal) after a blank line. */
    static String prompt(List<String> words, boolean readStdin) throws CliError {
        String text = String.join(" ", words).strip();
        if (readStdin && !Tty.isTerminal(0)) {
            String piped;
            try {
                piped = new String(System.in.readAllBytes(), StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw CliError.io("cannot read standard input: " + e.getMessage());
            }
            if (!piped.isEmpty()) {
                text = text.isEmpty() ? piped : text + "\n\n" + piped;
            }
        }
        return text;
    }

    /** The tools of --tools and --tool-json, or (when neither is given) those saved with a resumed conversation. */
    static CliTools tools(List<String> files, List<String> inline, @Nullable SavedConversation saved) throws CliError {
        if (files.isEmpty() && inline.isEmpty()) {
            return saved == null || saved.rawTools().isEmpty()
                    ? CliTools.NONE
                    : CliTools.parse(saved.rawTools(), Path.of("").toAbsolutePath(), "the saved tools");
        }
        List<CliTools> parts = new ArrayList<>();
        for (String file : files) {
            parts.add(CliTools.readFile(file));
        }
        if (!inline.isEmpty()) {
            parts.add(CliTools.parse(CliTools.readInline(inline), Path.of("").toAbsolutePath(), "--tool-json"));
        }
        return CliTools.merge(parts);
    }

    static ToolChoice toolChoice(@Nullable String value, CliTools tools) throws CliError {
        if (value == null || value.equals("auto")) {
            return ToolChoice.AUTO;
        }
        return switch (value) {
            case "none" -> ToolChoice.NONE;
            case "required", "any" -> {
                if (tools.tools().isEmpty()) {
                    throw CliError.usage("--tool-choice " + value + " needs tools (--tools or --tool-json)");
                }
                yield ToolChoice.REQUIRED;
            }
            case "explicit" -> ToolChoice.EXPLICIT;
            default -> {
                if (tools.find(value) == null) {
                    throw CliError.usage("--tool-choice: there is no tool named '" + value
                            + "' (use auto, none, required, " + "explicit or one of: "
                            + String.join(
                                    ", ",
                                    tools.tools().stream()
                                            .map(CliTools.Tool::name)
                                            .toList()) + ")");
                }
                yield new ToolChoice.Named(value);
            }
        };
    }

    /** Reads and checks a JSON Schema file; exit 2 names the file and the schema path. */
    static JsonNode readSchema(String file, @Nullable PrintStream warnings) throws CliError {
        String text = InfoCommands.readText(file, "schema");
        JsonNode schema;
        try {
            schema = Json.parse(text);
        } catch (IOException e) {
            throw new CliError("invalid_schema", CliError.USAGE, file + ": not valid JSON: " + e.getMessage());
        }
        try {
            GenerationSchema converted = GenerationSchema.convert(schema, "Response");
            if (warnings != null) {
                converted.warnings().forEach(w -> warnings.println("schema warning: " + w));
            }
        } catch (SchemaException e) {
            throw new CliError(
                    "invalid_schema", CliError.USAGE, file + ": at " + e.schemaPath() + ": " + e.getMessage());
        }
        return schema;
    }

    static LanguageModel model(ModelSource models, List<ModelBackend> backends, String command) throws CliError {
        try {
            return models.resolve(backends, command);
        } catch (IllegalArgumentException e) {
            throw CliError.usage(e.getMessage());
        }
    }
}
