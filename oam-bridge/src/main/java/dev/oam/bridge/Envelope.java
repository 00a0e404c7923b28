package dev.oam.bridge;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.DoubleNode;
import com.fasterxml.jackson.databind.node.LongNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.BridgeException;
import dev.oam.core.ErrorCode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import java.math.BigDecimal;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The JSON-RPC 2.0 envelope: reading an incoming message into a request, a response or a rejection, the rules for ids,
 * and writing responses, errors and notifications. Knows nothing of methods, requests in flight or delivery.
 */
final class Envelope {
    private static final long MAX_SAFE_LONG = 9_007_199_254_740_991L;
    static final BigDecimal MAX_SAFE_INTEGER = BigDecimal.valueOf(MAX_SAFE_LONG);

    private Envelope() {}

    /** What an incoming message is, once its envelope is read. */
    sealed interface Incoming {}

    /** A request, or a notification when {@code id} is null and it was not called in-process. */
    record Call(@Nullable JsonNode id, String method, ObjectNode params, boolean notification) implements Incoming {}

    /** A response to a request of ours ({@code tool/call}). */
    record Response(JsonNode id, JsonNode message) implements Incoming {}

    /** A message to answer with an error; {@code id} is null when it had none usable. */
    record Invalid(@Nullable JsonNode id, BridgeException error) implements Incoming {}

    /** A message to drop (logged): nothing could be answered to it. */
    record Ignored() implements Incoming {}

    /** Reads one parsed message; {@code local}: it was called in-process, so it is a request even without an id. */
    static Incoming read(JsonNode root, boolean local) {
        if (!root.isObject()) {
            return new Invalid(
                    null,
                    new BridgeException(
                            ErrorCode.INVALID_MESSAGE,
                            root.isArray()
                                    ? "Batches are not supported; send one JSON object per line."
                                    : "A message must be a JSON object."));
        }
        boolean hasId = root.has("id");
        JsonNode id = null;
        if (hasId) {
            try {
                id = normalizeId(root.get("id"));
            } catch (BridgeException e) {
                if (!root.has("method")) {
                    Log.warning("ignored a response with an unusable id: " + e.getMessage());
                    return new Ignored();
                }
                return new Invalid(null, e);
            }
        }
        JsonNode jsonrpc = root.get("jsonrpc");
        JsonNode methodNode = root.get("method");
        if (jsonrpc == null || !jsonrpc.isTextual() || !jsonrpc.textValue().equals("2.0")) {
            if (methodNode == null && !hasId) {
                Log.warning("ignored a message without \"jsonrpc\": \"2.0\"");
                return new Ignored();
            }
            return new Invalid(
                    id, new BridgeException(ErrorCode.INVALID_MESSAGE, "Every message needs \"jsonrpc\": \"2.0\"."));
        }
        if (methodNode == null) {
            if (id != null && (root.has("result") || root.has("error"))) {
                return new Response(id, root);
            }
            return new Invalid(
                    id,
                    new BridgeException(
                            ErrorCode.INVALID_MESSAGE,
                            "A request needs a 'method' string; a response needs 'result' or 'error'."));
        }
        if (!methodNode.isTextual()) {
            return new Invalid(id, new BridgeException(ErrorCode.INVALID_MESSAGE, "'method' must be a string."));
        }
        String method = methodNode.textValue();
        boolean notification = !hasId && !local;
        JsonNode paramsNode = root.get("params");
        if (paramsNode == null || paramsNode.isNull()) {
            return new Call(id, method, Json.object(), notification);
        }
        if (paramsNode.isObject()) {
            return new Call(id, method, (ObjectNode) paramsNode, notification);
        }
        if (notification) {
            Log.warning("ignored notification '" + method + "': its params are not an object");
            return new Ignored();
        }
        return new Invalid(
                id,
                BridgeException.invalidParams("Params must be an object (by name), not "
                        + (paramsNode.isArray()
                                ? "an array"
                                : "a " + paramsNode.getNodeType().name().toLowerCase(Locale.ROOT))
                        + "."));
    }

    /** Ids are echoed exactly: strings as they are, integers as plain digits; unsafe numbers are rejected. */
    static JsonNode normalizeId(JsonNode id) throws BridgeException {
        if (id.isTextual()) {
            return id;
        }
        if (id.isNull()) {
            throw new BridgeException(ErrorCode.INVALID_MESSAGE, "'id' must not be null; use a string or a number.");
        }
        if (id.isInt() || id.isLong()) { // the usual id, without the BigDecimal detour below
            long value = id.longValue();
            if (value > MAX_SAFE_LONG || value < -MAX_SAFE_LONG) {
                throw unsafeId();
            }
            return LongNode.valueOf(value);
        }
        if (id.isNumber()) {
            if (id.isDouble() || id.isFloat()) {
                double value = id.doubleValue();
                if (!Double.isFinite(value)) {
                    throw unsafeId();
                }
            }
            BigDecimal value = id.decimalValue();
            if (value.abs().compareTo(MAX_SAFE_INTEGER) > 0) {
                throw unsafeId();
            }
            BigDecimal stripped = value.stripTrailingZeros();
            if (stripped.scale() <= 0) {
                return LongNode.valueOf(stripped.longValueExact());
            }
            return DoubleNode.valueOf(value.doubleValue());
        }
        throw new BridgeException(ErrorCode.INVALID_MESSAGE, "'id' must be a string or a number.");
    }

    private static BridgeException unsafeId() {
        return new BridgeException(
                ErrorCode.INVALID_MESSAGE,
                "Numeric ids must be finite and at most 2^53-1 "
                        + "(9007199254740991) in magnitude to be echoed exactly; use a string id for larger values.");
    }

    /** A request message of ours ({@code tool/call}) or of an in-process caller. */
    static ObjectNode request(String id, String method, @Nullable JsonNode params) {
        ObjectNode message = Json.object();
        message.put("jsonrpc", "2.0");
        message.put("id", id);
        message.put("method", method);
        if (params != null) {
            message.set("params", params);
        }
        return message;
    }

    static ObjectNode result(JsonNode id, JsonNode result) {
        ObjectNode message = Json.object();
        message.put("jsonrpc", "2.0");
        message.set("id", id);
        message.set("result", result);
        return message;
    }

    static ObjectNode error(@Nullable JsonNode id, BridgeException error) {
        ObjectNode message = Json.object();
        message.put("jsonrpc", "2.0");
        message.set("id", id == null ? NullNode.getInstance() : id);
        message.set("error", error.toJson());
        return message;
    }

    static ObjectNode notification(String method, ObjectNode params) {
        ObjectNode message = Json.object();
        message.put("jsonrpc", "2.0");
        message.put("method", method);
        message.set("params", params);
        return message;
    }

    /** The error answering a line that is not JSON: the parser's first line, at most 300 characters of it. */
    static BridgeException parseError(Exception e) {
        String detail = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        int cut = detail.indexOf('\n');
        if (cut > 0) {
            detail = detail.substring(0, cut);
        }
        if (detail.length() > 300) {
            detail = detail.substring(0, 300) + "…";
        }
        return new BridgeException(ErrorCode.PARSE_ERROR, "Parse error: the line is not valid JSON (" + detail + ").");
    }

    /** Whether a line holds only JSON whitespace (such a line is skipped, not answered). */
    static boolean isBlank(byte[] bytes, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            byte b = bytes[i];
            if (b != ' ' && b != '\t' && b != '\r' && b != '\n') {
                return false;
            }
        }
        return true;
    }
}
