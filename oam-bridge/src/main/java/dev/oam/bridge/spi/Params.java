package dev.oam.bridge.spi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Typed access to a params object (or a nested object of it). {@code null} members are absent. Every error names the
 * parameter's path in single quotes. Keys that were never read can be reported as warnings with
 * {@link #unknownWarnings()}.
 */
public final class Params {
    private static final BigDecimal MAX_SECONDS = BigDecimal.valueOf(86_400);

    private final ObjectNode node;
    private final String prefix;
    private @Nullable Set<String> read; // made at the first read: most requests (ping) read nothing
    private @Nullable List<Params> children;

    private Params(ObjectNode node, String prefix) {
        this.node = node;
        this.prefix = prefix;
    }

    public static Params of(ObjectNode node) {
        return new Params(node, "");
    }

    /**
     * Params for an object found at {@code name} that is not read through another Params (a saved state, an array
     * element such as {@code requests[1]}): messages name {@code requests[1].options}. Its unknown keys are reported by
     * its own {@link #unknownWarnings()}.
     */
    public static Params of(ObjectNode node, String name) {
        return new Params(node, name.isEmpty() ? "" : name + ".");
    }

    public ObjectNode json() {
        return node;
    }

    /** The full path of a member for messages: {@code options.toolChoice}. */
    public String path(String name) {
        return prefix + name;
    }

    private void markRead(String name) {
        if (read == null) {
            read = new LinkedHashSet<>();
        }
        read.add(name);
    }

    public boolean has(String name) {
        markRead(name);
        JsonNode value = node.get(name);
        return value != null && !value.isNull();
    }

    /** The raw value, or {@code null} when absent or JSON null. */
    public @Nullable JsonNode get(String name) {
        markRead(name);
        JsonNode value = node.get(name);
        return value == null || value.isNull() ? null : value;
    }

    /** Whether the key is present at all, even as {@code null} (for "a present key wins"). */
    public boolean containsKey(String name) {
        markRead(name);
        return node.has(name);
    }

    public JsonNode require(String name) throws BridgeException {
        JsonNode value = get(name);
        if (value == null) {
            throw BridgeException.invalidParams("Missing required parameter '" + path(name) + "'.");
        }
        return value;
    }

    public String string(String name) throws BridgeException {
        JsonNode value = require(name);
        if (!value.isTextual()) {
            throw mistyped(name, "a string");
        }
        return value.textValue();
    }

    public @Nullable String optionalString(String name) throws BridgeException {
        JsonNode value = get(name);
        if (value == null) {
            return null;
        }
        if (!value.isTextual()) {
            throw mistyped(name, "a string");
        }
        return value.textValue();
    }

    public @Nullable Boolean optionalBool(String name) throws BridgeException {
        JsonNode value = get(name);
        if (value == null) {
            return null;
        }
        if (!value.isBoolean()) {
            throw mistyped(name, "true or false");
        }
        return value.booleanValue();
    }

    public boolean bool(String name, boolean defaultValue) throws BridgeException {
        Boolean value = optionalBool(name);
        return value == null ? defaultValue : value;
    }

    /** An integer of at least {@code min} (integral numbers like {@code 3.0} are accepted). */
    public @Nullable Integer optionalInt(String name, int min) throws BridgeException {
        JsonNode value = get(name);
        if (value == null) {
            return null;
        }
        String expected = "an integer ≥ " + min;
        if (!value.isNumber()) {
            throw mistyped(name, expected);
        }
        BigDecimal decimal = value.decimalValue();
        if (decimal.compareTo(BigDecimal.valueOf(min)) < 0
                || decimal.compareTo(BigDecimal.valueOf(Integer.MAX_VALUE)) > 0) {
            throw mistyped(name, expected);
        }
        try {
            return decimal.intValueExact();
        } catch (ArithmeticException e) {
            throw mistyped(name, expected);
        }
    }

    /** A finite number of at least {@code min}. */
    public @Nullable Double optionalNumber(String name, double min) throws BridgeException {
        JsonNode value = get(name);
        if (value == null) {
            return null;
        }
        String expected = "a number ≥ " + (min == Math.rint(min) ? String.valueOf((long) min) : String.valueOf(min));
        if (!value.isNumber()) {
            throw mistyped(name, expected);
        }
        double number = value.doubleValue();
        if (!Double.isFinite(number) || number < min) {
            throw mistyped(name, expected);
        }
        return number;
    }

    /** A {@code …TimeoutSeconds} value: a finite number from 0 to 86400; 0 is returned as {@link Duration#ZERO}. */
    public @Nullable Duration optionalSeconds(String name) throws BridgeException {
        JsonNode value = get(name);
        if (value == null) {
            return null;
        }
        return seconds(value, path(name));
    }

    static Duration seconds(JsonNode value, String path) throws BridgeException {
        if (!value.isNumber()) {
            throw secondsError(path);
        }
        BigDecimal seconds = value.decimalValue();
        if (seconds.signum() < 0 || seconds.compareTo(MAX_SECONDS) > 0) {
            throw secondsError(path);
        }
        long nanos = seconds.movePointRight(9)
                .setScale(0, java.math.RoundingMode.HALF_UP)
                .longValueExact();
        return Duration.ofNanos(nanos);
    }

    private static BridgeException secondsError(String path) {
        return BridgeException.invalidParameter(
                path, " must be a number of seconds from 0 to 86400 (0 means no limit).");
    }

    public @Nullable List<String> optionalStringList(String name) throws BridgeException {
        JsonNode value = get(name);
        if (value == null) {
            return null;
        }
        if (!value.isArray()) {
            throw mistyped(name, "an array of strings");
        }
        List<String> out = new ArrayList<>();
        for (JsonNode item : value) {
            if (!item.isTextual()) {
                throw mistyped(name, "an array of strings");
            }
            out.add(item.textValue());
        }
        return out;
    }

    /** A nested object as Params (absent → an empty one); its unknown keys are reported with this one's. */
    public Params object(String name) throws BridgeException {
        JsonNode value = get(name);
        ObjectNode child;
        if (value == null) {
            child = Json.object();
        } else if (value.isObject()) {
            child = (ObjectNode) value;
        } else {
            throw mistyped(name, "an object");
        }
        Params params = new Params(child, path(name) + ".");
        if (children == null) {
            children = new ArrayList<>();
        }
        children.add(params);
        return params;
    }

    /** An object id ({@code session}, {@code npc}, {@code world}): 1–128 printable characters. */
    public static String checkId(String id, String path) throws BridgeException {
        int length = id.codePointCount(0, id.length());
        boolean printable = id.codePoints()
                .allMatch(c -> !Character.isISOControl(c)
                        && Character.isDefined(c)
                        && Character.getType(c) != Character.SURROGATE
                        && Character.getType(c) != Character.LINE_SEPARATOR
                        && Character.getType(c) != Character.PARAGRAPH_SEPARATOR);
        if (length < 1 || length > 128 || !printable) {
            throw BridgeException.invalidParams("Parameter '" + path + "' must be 1–128 printable characters.");
        }
        return id;
    }

    public BridgeException mistyped(String name, String expected) {
        return BridgeException.invalidParams("Parameter '" + path(name) + "' must be " + expected + ".");
    }

    /** One warning for each member that no accessor asked for, in document order, nested ones included. */
    public List<String> unknownWarnings() {
        List<String> warnings = new ArrayList<>();
        for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (read == null || !read.contains(key)) {
                warnings.add("Unknown parameter '" + path(key) + "' was ignored.");
            }
        }
        if (children != null) {
            for (Params child : children) {
                warnings.addAll(child.unknownWarnings());
            }
        }
        return warnings;
    }
}
