package dev.oam.model.llama.jni;

import de.kherud.llama.InferenceParameters;
import dev.oam.model.llama.engine.NativeLibrary;
import java.lang.reflect.Field;
import java.util.Map;

/**
 * Sets llama.cpp server keys the binding has no setter for ({@code id_slot}), through the package-private map the
 * binding serialises. Values go in as raw JSON, and malformed JSON aborts the JVM in native code, so callers pass only
 * values they built themselves (integers here).
 */
public final class RawParameters {
    private static final Field PARAMETERS = parametersField();

    private RawParameters() {}

    private static Field parametersField() {
        try {
            Field field = InferenceParameters.class.getSuperclass().getDeclaredField("parameters");
            field.setAccessible(true);
            return field;
        } catch (ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException(
                    "de.kherud:llama " + NativeLibrary.BINDING_VERSION
                            + " is required (its InferenceParameters changed): " + e,
                    e);
        }
    }

    /** Puts {@code key: value}, a finite number. */
    static void putNumber(InferenceParameters parameters, String key, double value) {
        if (!Double.isFinite(value)) {
            throw new IllegalArgumentException(key + " must be finite, was " + value);
        }
        put(
                parameters,
                key,
                value == Math.rint(value) && Math.abs(value) < 1e15
                        ? Long.toString((long) value)
                        : Double.toString(value));
    }

    /** Puts {@code key: [strings]}, written by Jackson (so always well-formed JSON). */
    static void putStrings(InferenceParameters parameters, String key, java.util.List<String> values) {
        put(parameters, key, dev.oam.core.json.Json.write(dev.oam.core.json.Json.strings(values)));
    }

    private static void put(InferenceParameters parameters, String key, String json) {
        try {
            @SuppressWarnings("unchecked")
            Map<String, String> map = (Map<String, String>) PARAMETERS.get(parameters);
            map.put(key, json);
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Puts {@code key: value}; {@code value} must be a non-negative integer. */
    static void putInt(InferenceParameters parameters, String key, int value) {
        if (value < 0) {
            throw new IllegalArgumentException(key + " must be ≥ 0, was " + value);
        }
        try {
            @SuppressWarnings("unchecked")
            Map<String, String> map = (Map<String, String>) PARAMETERS.get(parameters);
            map.put(key, Integer.toString(value));
        } catch (IllegalAccessException e) {
            throw new IllegalStateException(e);
        }
    }
}
