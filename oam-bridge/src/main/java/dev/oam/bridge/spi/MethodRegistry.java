package dev.oam.bridge.spi;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
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

    /** Collects handlers; a later registration of a name replaces the earlier one. */
    public static final class Builder {
        private final Map<String, Handler> handlers = new LinkedHashMap<>();

        private Builder() {}

        public Builder register(String method, Handler handler) {
            handlers.put(method, handler);
            return this;
        }

        public MethodRegistry build() {
            return new MethodRegistry(handlers);
        }
    }
}
