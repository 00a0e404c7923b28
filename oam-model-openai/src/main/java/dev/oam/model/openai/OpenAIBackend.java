package dev.oam.model.openai;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelBackend;
import dev.oam.core.model.ModelParameterException;
import java.net.http.HttpClient;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.jspecify.annotations.Nullable;

/**
 * OpenAI-compatible Chat Completions servers (Ollama, llama.cpp's llama-server, vLLM, LM Studio, a Mac's {@code oam
 * serve}): serves {@code {"type": "openai", …}} and {@code --model http(s)://…} system models. Found through
 * {@code META-INF/services/dev.oam.core.model.ModelBackend}.
 *
 * <p>One HTTP client and one timer thread ({@code oam-openai-timer}, which aborts requests that run out of time) serve
 * every model the backend creates; both start on first use and stop in {@link #close()}. What is learned about an
 * endpoint (see {@link Endpoint}) is shared by every model on the same {@code baseUrl} and model name.
 */
public final class OpenAIBackend implements ModelBackend {
    public static final String TYPE = "openai";

    private final Environment environment;
    private final Map<String, Endpoint> endpoints = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    private @Nullable HttpClient http; // guarded by lock
    private @Nullable ScheduledThreadPoolExecutor timers; // guarded by lock
    private boolean closed; // guarded by lock

    /** Reads API keys from the process environment. */
    public OpenAIBackend() {
        this(Environment.system());
    }

    /** Reads API keys through {@code environment} (tests, hosts that keep keys elsewhere). */
    public OpenAIBackend(Environment environment) {
        this.environment = environment;
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public LanguageModel create(ObjectNode spec, String path) throws ModelParameterException {
        return model(Settings.parse(spec, path, environment));
    }

    @Override
    public boolean servesSystemModel(String location) {
        return Settings.isHttpUrl(location);
    }

    @Override
    public LanguageModel systemModel(String location, @Nullable String name) {
        return systemModel(location, name, environment);
    }

    /**
     * The key comes from {@code OAM_API_KEY} as {@code hostEnvironment} gives it (the C ABI's settings of one bridge).
     */
    @Override
    public LanguageModel systemModel(String location, @Nullable String name, Environment hostEnvironment) {
        OpenAIModel model = model(Settings.system(location, name, hostEnvironment));
        model.startProbe(); // so the first model/availability rarely has to wait
        return model;
    }

    OpenAIModel model(Settings settings) {
        Endpoint endpoint = endpoints.computeIfAbsent(
                settings.baseUrl() + " " + (settings.model() == null ? "" : settings.model()),
                key -> new Endpoint(
                        settings.displayUrl() + (settings.model() == null ? "" : " (" + settings.model() + ")")));
        synchronized (lock) {
            if (closed) {
                throw new IllegalStateException("the openai backend is closed");
            }
            if (http == null) {
                http = Exchange.newClient();
                ScheduledThreadPoolExecutor executor = new ScheduledThreadPoolExecutor(1, runnable -> {
                    Thread thread = new Thread(runnable, "oam-openai-timer");
                    thread.setDaemon(true);
                    return thread;
                });
                executor.setRemoveOnCancelPolicy(true);
                timers = executor;
            }
            return new OpenAIModel(settings, endpoint, new Exchange(http, timers, settings));
        }
    }

    /** Aborts outstanding requests and stops the timer thread. */
    @Override
    public void close() {
        HttpClient client;
        ScheduledThreadPoolExecutor executor;
        synchronized (lock) {
            closed = true;
            client = http;
            executor = timers;
            http = null;
            timers = null;
        }
        if (client != null) {
            client.shutdownNow();
        }
        if (executor != null) {
            executor.shutdownNow();
        }
    }
}
