package dev.oam.bridge.client;

import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One call of a client tool: its name and its arguments, already checked against the tool's parameter schema.
 *
 * @param arguments the arguments as Java values (strings, numbers, booleans, lists, maps; {@code null} for JSON null)
 */
public record ToolInvocation(String name, Map<String, @Nullable Object> arguments) {
    public ToolInvocation {
        Objects.requireNonNull(name, "name");
        arguments = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(arguments));
    }

    /** An argument as text ({@code String.valueOf} of its value), or {@code fallback} when it is absent or null. */
    public String string(String argument, String fallback) {
        Object value = arguments.get(argument);
        return value == null ? fallback : String.valueOf(value);
    }
}
