package dev.oam.core.tool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Duration;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A client tool the model may call.
 *
 * @param parameters JSON Schema of the arguments
 * @param timeout this tool's own timeout, or {@code null} for the session's; {@link Duration#ZERO} waits forever
 */
public record ToolDefinition(String name, @Nullable String description, ObjectNode parameters, @Nullable Duration timeout) {
    public static final String RESPOND_DIRECTLY = "respond_directly";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_.\\-]{1,64}");

    public ToolDefinition {
        if (!isValidName(name)) {
            throw new IllegalArgumentException("invalid tool name: " + name);
        }
        parameters = parameters.deepCopy();
    }

    public static boolean isValidName(String name) {
        return NAME.matcher(name).matches();
    }

    public Duration effectiveTimeout(Duration sessionDefault) {
        return timeout == null ? sessionDefault : timeout;
    }
}
