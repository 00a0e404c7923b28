package dev.oam.core.model;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;
import org.jspecify.annotations.Nullable;

/**
 * A model backend found on the class path ({@code META-INF/services/dev.oam.core.model.ModelBackend}): it serves
 * {@code "model": {"type": type(), …}} values and, when the host configures one, the system model ({@code oam stdio
 * --model …}, {@code OAM_MODEL}).
 */
public interface ModelBackend {
    /** The {@code type} it serves, e.g. {@code "llama"} or {@code "openai"}. */
    String type();

    /** A model for a client's {@code {"type": type(), …}} value. */
    LanguageModel create(ObjectNode spec, String path) throws ModelParameterException;

    /** Whether {@code location} (a file path or URL given with {@code --model}) is this backend's. */
    boolean servesSystemModel(String location);

    /**
     * The system model at {@code location}.
     *
     * @param name the model name ({@code --model-name}, {@code OAM_MODEL_NAME}), when given
     * @throws Exception with a message fit for the person starting the bridge
     */
    LanguageModel systemModel(String location, @Nullable String name) throws Exception;

    /**
     * The system model at {@code location}, reading the host's other variables (such as {@code OAM_API_KEY}) through
     * {@code environment}: the process environment for {@code oam stdio}, the settings of each
     * {@code oam_bridge_create} for the C ABI. Backends that read none keep this default.
     */
    default LanguageModel systemModel(String location, @Nullable String name, Environment environment)
            throws Exception {
        return systemModel(location, name);
    }

    /** Frees what the backend holds (loaded models, connections); called once when the host stops. */
    default void close() {}

    /** Every backend on the class path, in class-path order. */
    static List<ModelBackend> discover() {
        List<ModelBackend> backends = new ArrayList<>();
        ServiceLoader.load(ModelBackend.class, ModelBackend.class.getClassLoader())
                .forEach(backends::add);
        return backends;
    }
}
