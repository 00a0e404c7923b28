package dev.oam.bridge.spi;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/** The methods an engine serves. Built once, then immutable. */
public final class MethodRegistry {
    private final Map<String, Handler> handlers;

    private MethodRegistry(Map<String, Handler> handlers) {
        this.handlers = Map.copyOf(handlers);
    }

    public @Nullable Handler handler(String method) {
        return handlers.get(method);
    }

    /** Method names in alphabetical order (as {@code capabilities.methods}). */
    public List<String> methods() {
        return List.copyOf(new TreeSet<>(handlers.keySet()));
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * Collects handlers. A method is registered once: registering a name again is a mistake (two extensions, or an
     * extension and the engine, claiming one method) and is refused, unless the later one asks to {@linkplain #override
     * replace} it.
     */
    public static final class Builder {
        private final Map<String, Handler> handlers = new LinkedHashMap<>();

        private Builder() {}

        /** Registers {@code method}; throws {@link IllegalStateException} when it is registered already. */
        public Builder register(String method, Handler handler) {
            Objects.requireNonNull(handler, "handler");
            if (handlers.putIfAbsent(method, handler) != null) {
                throw new IllegalStateException(
                        "method '" + method + "' is registered already; use override to replace" + " its handler");
            }
            return this;
        }

        /** Replaces the handler of {@code method}; throws {@link IllegalStateException} when it is not registered. */
        public Builder override(String method, Handler handler) {
            Objects.requireNonNull(handler, "handler");
            if (handlers.replace(method, handler) == null) {
                throw new IllegalStateException(
                        "method '" + method + "' is not registered, so there is nothing to override");
            }
            return this;
        }

        public MethodRegistry build() {
            return new MethodRegistry(handlers);
        }
    }
}
