package dev.oam.core.tool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import java.time.Duration;
import java.util.List;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A client tool the model may call.
 *
 * @param parameters JSON Schema of the arguments, as the client sent it
 * @param timeout this tool's own timeout, or {@code null} for the session's; {@link Duration#ZERO} waits forever
 * @param schema the parameters' generation schema, which arguments are validated against
 */
public record ToolDefinition(
        String name,
        @Nullable String description,
        ObjectNode parameters,
        @Nullable Duration timeout,
        GenerationSchema schema) {
    public static final String RESPOND_DIRECTLY = "respond_directly";
    /** How every backend describes the hidden {@link #RESPOND_DIRECTLY} tool to a model. */
    public static final String RESPOND_DIRECTLY_DESCRIPTION =
            "Call this instead of another tool when you can answer the user without one.";

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.\\-]{1,64}");

    public ToolDefinition {
        if (!isValidName(name)) {
            throw new IllegalArgumentException("invalid tool name: " + name);
        }
        parameters = parameters.deepCopy();
    }

    /** Converts the parameters; throws {@link IllegalArgumentException} when they are not a usable schema. */
    public ToolDefinition(
            String name, @Nullable String description, ObjectNode parameters, @Nullable Duration timeout) {
        this(name, description, parameters, timeout, convert(parameters, name));
    }

    private static GenerationSchema convert(ObjectNode parameters, String name) {
        try {
            return GenerationSchema.convertParameters(parameters, name);
        } catch (SchemaException e) {
            throw new IllegalArgumentException(name + ": " + e.schemaPath() + ": " + e.getMessage(), e);
        }
    }

    public static boolean isValidName(String name) {
        return NAME.matcher(name).matches();
    }

    public Duration effectiveTimeout(Duration sessionDefault) {
        return timeout == null ? sessionDefault : timeout;
    }

    /**
     * The text that lists tools to a model that sees them in its prompt rather than through an API: {@code Tools you
     * can call:} and a line per tool with its description and its parameters' generation schema, then
     * {@code respond_directly} when offered.
     *
     * @param parametersLabel what the schema is called in the lines ({@code "Parameters:"}, {@code "Arguments:"})
     */
    public static String promptListing(
            List<ToolDefinition> tools, boolean offerRespondDirectly, String parametersLabel) {
        StringBuilder out = new StringBuilder("Tools you can call:");
        for (ToolDefinition tool : tools) {
            out.append("\n- ").append(tool.name());
            if (tool.description() != null && !tool.description().isBlank()) {
                out.append(": ").append(tool.description().strip());
            }
            out.append(' ')
                    .append(parametersLabel)
                    .append(' ')
                    .append(Json.write(tool.schema().json()));
        }
        if (offerRespondDirectly) {
            out.append("\n- ")
                    .append(RESPOND_DIRECTLY)
                    .append(": ")
                    .append(RESPOND_DIRECTLY_DESCRIPTION)
                    .append(' ')
                    .append(parametersLabel)
                    .append(" {}");
        }
        return out.toString();
    }
}
