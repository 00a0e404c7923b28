package dev.oam.cli;

import dev.oam.core.Log;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.server.OpenAIServer;
import dev.oam.server.ServerOptions;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code oam serve}: the OpenAI-compatible HTTP server (docs/SERVER.md). */
@Command(
        name = "serve",
        mixinStandardHelpOptions = true,
        description = {
            "Serve the system model over an OpenAI-compatible HTTP API (Chat Completions with real tool calls).",
            "Localhost only unless --host says otherwise. Logs go to standard error."
        })
final class ServeCommand implements Callable<Integer> {
    @Option(names = "--host", paramLabel = "ADDRESS", description = "Address to listen on (default 127.0.0.1).")
    String host;

    @Option(names = "--port", paramLabel = "PORT", description = "TCP port (default 1976; 0 = any free port).")
    Integer port;

    @Option(
            names = "--socket",
            paramLabel = "PATH",
            description = "Also (or, without --host/--port, only) listen on this Unix socket (mode 0600).")
    Path socket;

    @Option(
            names = {"-i", "--instructions"},
            paramLabel = "TEXT",
            description = "Instructions put before every request's system messages.")
    String instructions;

    @Option(
            names = "--api-key",
            paramLabel = "KEY",
            description = "Require 'Authorization: Bearer KEY' on /v1/* (default $OAM_API_KEY; --api-key '' for none).")
    String apiKey;

    @Option(
            names = "--allow-origin",
            paramLabel = "ORIGIN",
            description = "Allow browser requests from ORIGIN (repeatable; * allows any).")
    List<String> allowedOrigins = new ArrayList<>();

    @Option(
            names = "--model-alias",
            paramLabel = "NAME=system",
            description = "Serve the system model under another id too (repeatable).")
    List<String> aliases = new ArrayList<>();

    @Option(
            names = "--max-concurrent",
            defaultValue = "4",
            paramLabel = "N",
            description = "Completions run at once (default 4).")
    int maxConcurrent;

    @Option(
            names = "--max-queued",
            defaultValue = "64",
            paramLabel = "N",
            description = "Completions waiting beyond those (default 64; more get 429).")
    int maxQueued;

    @Option(
            names = "--timeout",
            defaultValue = "120",
            paramLabel = "SECONDS",
            description = "Longest a completion may take, queueing included (default 120).")
    double timeout;

    @Option(
            names = "--log-level",
            defaultValue = "info",
            paramLabel = "LEVEL",
            description = "debug, info (default), warning, error or off.")
    String logLevel;

    @Mixin
    ModelSource models = new ModelSource();

    @Override
    public Integer call() throws Exception {
        StdioCommand.noNativeBacktraces();
        try {
            Log.setLevel(Log.parseLevel(logLevel));
        } catch (IllegalArgumentException e) {
            return usage(e.getMessage());
        }
        if (maxConcurrent < 1 || maxQueued < 0) {
            return usage("--max-concurrent must be at least 1 and --max-queued at least 0");
        }
        if (!(timeout > 0 && timeout <= 86_400)) {
            return usage("--timeout must be a number of seconds above 0 and at most 86400");
        }
        Map<String, String> aliasMap = new LinkedHashMap<>();
        for (String alias : aliases) {
            int eq = alias.indexOf('=');
            if (eq <= 0 || !alias.substring(eq + 1).equals("system")) {
                return usage(
                        "--model-alias takes NAME=system (the alias must name the system model), not '" + alias + "'");
            }
            aliasMap.put(alias.substring(0, eq), "system");
        }
        boolean tcp = host != null || port != null || socket == null;
        List<ModelBackend> backends = ModelBackend.discover();
        LanguageModel system;
        try {
            system = systemModel(backends);
        } catch (IllegalArgumentException e) { // ModelBackends.ModelSetupException, or a bad OAM_SCRIPT
            System.err.println("oam serve: " + e.getMessage());
            return 2;
        }
        ServerOptions options;
        try {
            options = ServerOptions.defaults(system)
                    .withListener(
                            tcp ? (host != null ? host : ServerOptions.DEFAULT_HOST) : null,
                            port != null ? port : ServerOptions.DEFAULT_PORT,
                            socket)
                    .withAliases(aliasMap)
                    .withInstructions(instructions)
                    .withSecurity(
                            apiKey != null
                                    ? blankToNull(apiKey)
                                    : blankToNull(
                                            models.system.variable(dev.oam.core.model.ModelSpec.API_KEY_VARIABLE)),
                            allowedOrigins)
                    .withLimits(
                            maxConcurrent,
                            maxQueued,
                            Duration.ofMillis((long) (timeout * 1000)),
                            Duration.ofSeconds(30),
                            16 * 1024 * 1024,
                            64 * 1024);
        } catch (IllegalArgumentException e) {
            return usage(e.getMessage());
        }
        OpenAIServer server;
        try {
            server = OpenAIServer.start(options);
        } catch (IOException e) {
            System.err.println("oam serve: cannot start the server (server_start_failed): " + e.getMessage());
            backends.forEach(ModelBackend::close);
            return 1;
        }
        Runtime.getRuntime()
                .addShutdownHook(new Thread(
                        () -> {
                            server.close();
                            backends.forEach(ModelBackend::close);
                        },
                        "oam-serve-shutdown"));
        announce(server, options);
        server.join();
        return 0;
    }

    /**
     * The model served as {@code system}: OAM_SCRIPT's scripted model when set, otherwise the one {@code oam stdio}
     * would use, otherwise a stand-in that answers 503 model_unavailable.
     */
    private LanguageModel systemModel(List<ModelBackend> backends) {
        return models.resolve(backends, "oam serve");
    }

    private static void announce(OpenAIServer server, ServerOptions options) {
        StringBuilder out = new StringBuilder();
        if (server.port() >= 0) {
            out.append("oam serve: listening on ").append(server.uri()).append("/v1\n");
        }
        if (options.socket() != null) {
            out.append("oam serve: listening on unix:")
                    .append(options.socket().toAbsolutePath())
                    .append('\n');
        }
        String target = server.port() >= 0
                ? server.uri() + "/v1/chat/completions"
                : "--unix-socket " + options.socket().toAbsolutePath() + " http://localhost/v1/chat/completions";
        out.append("Try: curl -s ").append(target).append(" -H 'Content-Type: application/json'");
        if (options.apiKey() != null) {
            out.append(" -H \"Authorization: Bearer $OAM_API_KEY\"");
        }
        out.append(" -d '{\"model\":\"system\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello!\"}]}'\n");
        System.out.print(out);
        System.out.flush();
    }

    private static String blankToNull(String value) {
        return value == null || value.isBlank() ? null : value;
    }

    private static int usage(String message) {
        System.err.println("oam serve: " + message);
        return 2;
    }
}
