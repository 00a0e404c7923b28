package dev.oam.server;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Reads one field of a request object, checked: a wrong type or value becomes an {@link ApiError} that names the
 * field's path.
 */
final class ChatFields {
    private ChatFields() {}

    static List<String> stop(@Nullable JsonNode node) throws ApiError {
        if (node == null || node.isNull()) {
            return List.of();
        }
        List<String> stops = new ArrayList<>();
        if (node.isTextual()) {
            stops.add(node.textValue());
        } else if (node.isArray() && node.size() <= 4) {
            for (JsonNode item : node) {
                if (!item.isTextual()) {
                    throw ApiError.invalid(
                            "stop", "invalid_type", "'stop' must be a string or an array of up to 4 strings.");
                }
                stops.add(item.textValue());
            }
        } else {
            throw ApiError.invalid("stop", "invalid_value", "'stop' must be a string or an array of up to 4 strings.");
        }
        if (stops.stream().anyMatch(String::isEmpty)) {
            throw ApiError.invalidValue("stop", "Stop sequences must not be empty.");
        }
        return List.copyOf(stops);
    }

    static String requiredString(JsonNode node, String field) throws ApiError {
        return requiredString(node, field, field);
    }

    static String requiredString(JsonNode node, String field, String path) throws ApiError {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            throw ApiError.invalid(path, "missing_required_parameter", "Missing required parameter: '" + path + "'.");
        }
        if (!value.isTextual()) {
            throw ApiError.invalid(path, "invalid_type", "'" + path + "' must be a string.");
        }
        return value.textValue();
    }

    static boolean optionalBoolean(JsonNode node, String field, boolean fallback) throws ApiError {
        return optionalBoolean(node, field, fallback, field);
    }

    static boolean optionalBoolean(JsonNode node, String field, boolean fallback, String path) throws ApiError {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return fallback;
        }
        if (!value.isBoolean()) {
            throw ApiError.invalid(path, "invalid_type", "'" + path + "' must be a boolean.");
        }
        return value.booleanValue();
    }

    static @Nullable Double optionalNumber(JsonNode node, String field, double min, double max) throws ApiError {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isNumber()) {
            throw ApiError.invalid(field, "invalid_type", "'" + field + "' must be a number.");
        }
        double number = value.doubleValue();
        if (!(number >= min && number <= max)) {
            throw ApiError.invalidValue(
                    field, "'" + field + "' must be from " + fmt(min) + " to " + fmt(max) + ", not " + value + ".");
        }
        return number;
    }

    static String fmt(double value) {
        return value == Math.rint(value) ? Long.toString((long) value) : Double.toString(value);
    }

    static @Nullable Integer optionalPositiveInt(JsonNode node, String field) throws ApiError {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber()) {
            throw ApiError.invalid(field, "invalid_type", "'" + field + "' must be an integer.");
        }
        if (!value.canConvertToInt() || value.intValue() < 1) {
            throw ApiError.invalidValue(field, "'" + field + "' must be an integer of at least 1.");
        }
        return value.intValue();
    }
}
