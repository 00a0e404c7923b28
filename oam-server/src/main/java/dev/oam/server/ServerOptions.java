package dev.oam.server;

import dev.oam.core.model.LanguageModel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * How {@link OpenAIServer} listens and what it serves. The defaults are those of {@code oam serve}.
 *
 * @param host the TCP address, or {@code null} for no TCP listener (a Unix socket only)
 * @param port the TCP port; 0 picks a free one
 * @param socket a Unix domain socket path (created with mode 0600), or {@code null}
 * @param models the models by id, in listing order; the first is the default
 * @param aliases extra ids, each naming a model of {@code models}
 * @param instructions the server's instructions, put before the request's system and developer messages, or
 *     {@code null}
 * @param apiKey the Bearer token required on /v1/*, or {@code null} for none
 * @param allowedOrigins browser origins allowed to call (CORS); {@code "*"} allows any; every other {@code Origin} gets
 *     403
 * @param requestTimeout the longest a completion may take, its time in the queue included
 * @param idleTimeout how long a connection may stay silent (slow or stalled clients are dropped)
 */
public record ServerOptions(
        @Nullable String host,
        int port,
        @Nullable Path socket,
        Map<String, LanguageModel> models,
        Map<String, String> aliases,
        @Nullable String instructions,
        @Nullable String apiKey,
        List<String> allowedOrigins,
        int maxConcurrent,
        int maxQueued,
        Duration requestTimeout,
        Duration idleTimeout,
        int maxBodyBytes,
        int maxHeaderBytes) {

    public static final String DEFAULT_HOST = "127.0.0.1";
    public static final int DEFAULT_PORT = 1976;

    public ServerOptions {
        if (host == null && socket == null) {
            throw new IllegalArgumentException("the server needs a host and port, a socket path, or both");
        }
        if (port < 0 || port > 65_535) {
            throw new IllegalArgumentException("port must be from 0 to 65535");
        }
        if (models.isEmpty()) {
            throw new IllegalArgumentException("the server needs at least one model");
        }
        models = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(models));
        aliases = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(aliases));
        for (Map.Entry<String, String> alias : aliases.entrySet()) {
            if (!models.containsKey(alias.getValue())) {
                throw new IllegalArgumentException("the alias '" + alias.getKey() + "' names '" + alias.getValue()
                        + "', which is not a model of this server (" + String.join(", ", models.keySet()) + ")");
            }
            if (models.containsKey(alias.getKey())) {
                throw new IllegalArgumentException("the alias '" + alias.getKey() + "' is already a model id");
            }
        }
        allowedOrigins = List.copyOf(allowedOrigins);
        if (maxConcurrent < 1 || maxQueued < 0) {
            throw new IllegalArgumentException("maxConcurrent must be at least 1 and maxQueued at least 0");
        }
        if (requestTimeout.isNegative()
                || requestTimeout.isZero()
                || idleTimeout.isNegative()
                || idleTimeout.isZero()) {
            throw new IllegalArgumentException("timeouts must be positive");
        }
        if (maxBodyBytes < 1 || maxHeaderBytes < 1024) {
            throw new IllegalArgumentException("maxBodyBytes must be positive and maxHeaderBytes at least 1024");
        }
    }

    /** Localhost:1976, one model called {@code system}, 4 running and 64 queued, 120 s per request, 30 s idle. */
    public static ServerOptions defaults(LanguageModel systemModel) {
        return new ServerOptions(
                DEFAULT_HOST,
                DEFAULT_PORT,
                null,
                Map.of("system", systemModel),
                Map.of(),
                null,
                null,
                List.of(),
                4,
                64,
                Duration.ofSeconds(120),
                Duration.ofSeconds(30),
                16 * 1024 * 1024,
                64 * 1024);
    }

    public ServerOptions withListener(@Nullable String host, int port, @Nullable Path socket) {
        return new ServerOptions(
                host,
                port,
                socket,
                models,
                aliases,
                instructions,
                apiKey,
                allowedOrigins,
                maxConcurrent,
                maxQueued,
                requestTimeout,
                idleTimeout,
                maxBodyBytes,
                maxHeaderBytes);
    }

    public ServerOptions withAliases(Map<String, String> aliases) {
        return new ServerOptions(
                host,
                port,
                socket,
                models,
                aliases,
                instructions,
                apiKey,
                allowedOrigins,
                maxConcurrent,
                maxQueued,
                requestTimeout,
                idleTimeout,
                maxBodyBytes,
                maxHeaderBytes);
    }

    public ServerOptions withInstructions(@Nullable String instructions) {
        return new ServerOptions(
                host,
                port,
                socket,
                models,
                aliases,
                instructions,
                apiKey,
                allowedOrigins,
                maxConcurrent,
                maxQueued,
                requestTimeout,
                idleTimeout,
                maxBodyBytes,
                maxHeaderBytes);
    }

    public ServerOptions withSecurity(@Nullable String apiKey, List<String> allowedOrigins) {
        return new ServerOptions(
                host,
                port,
                socket,
                models,
                aliases,
                instructions,
                apiKey,
                allowedOrigins,
                maxConcurrent,
                maxQueued,
                requestTimeout,
                idleTimeout,
                maxBodyBytes,
                maxHeaderBytes);
    }

    public ServerOptions withLimits(
            int maxConcurrent,
            int maxQueued,
            Duration requestTimeout,
            Duration idleTimeout,
            int maxBodyBytes,
            int maxHeaderBytes) {
        return new ServerOptions(
                host,
                port,
                socket,
                models,
                aliases,
                instructions,
                apiKey,
                allowedOrigins,
                maxConcurrent,
                maxQueued,
                requestTimeout,
                idleTimeout,
                maxBodyBytes,
                maxHeaderBytes);
    }

    /** The id the listing and the health check treat as the server's own model. */
    public String defaultModel() {
        return models.keySet().iterator().next();
    }
}
