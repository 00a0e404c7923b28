package dev.oam.core.tool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import java.time.Duration;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A client tool the model may call.
 *
 * @param parameters JSON Schema of the arguments, as the client sent it
 * @param timeout this tool's own timeout, or {@code null} for the session's; {@link Duration#ZERO} waits forever
 * @param schema the parameters' generation schema, which arguments are validated against
 */
public record ToolDefinition(String name, @Nullable String description, ObjectNode parameters, @Nullable Duration timeout,
        GenerationSchema schema) {
    public static final String RESPOND_DIRECTLY = "respond_directly";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.\\-]{1,64}");

    public ToolDefinition {
        if (!isValidName(name)) {
            throw new IllegalArgumentException("invalid tool name: " + name);
        }
        parameters = parameters.deepCopy();
    }

    /** Converts the parameters; throws {@link IllegalArgumentException} when they are not a usable schema. */
    public ToolDefinition(String name, @Nullable String description, ObjectNode parameters, @Nullable Duration timeout) {
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
}
