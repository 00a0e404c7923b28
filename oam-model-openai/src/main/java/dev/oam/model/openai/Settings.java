package dev.oam.model.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Environment;
import dev.oam.core.model.LanguageModel;
import dev.oam.core.model.ModelParameterException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Duration;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One configured endpoint: {@code {"type": "openai", "baseUrl", "model", "apiKeyEnv"?, "headers"?, "toolCallMode"?,
 * "contextSize"?, "timeoutSeconds"?}} from a client, or the host's system model.
 *
 * @param baseUrl the API root without a trailing slash, e.g. {@code http://127.0.0.1:11434/v1}
 * @param model the model name sent with every request; {@code null} for a system model configured without a name (then
 *     the server's only model is used)
 * @param timeout the longest one request may take; {@link Duration#ZERO} waits forever
 */
record Settings(
        URI baseUrl,
        @Nullable String model,
        String apiKeyEnv,
        Secret apiKey,
        Map<String, String> headers,
        ToolCallMode toolCallMode,
        int contextSize,
        Duration timeout) {
    static final String DEFAULT_KEY_ENV = dev.oam.core.model.ModelSpec.API_KEY_VARIABLE;
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(300);
    static final int MIN_CONTEXT = 256;
    static final int MAX_CONTEXT = 16 * 1024 * 1024;
    private static final List<String> MEMBERS = List.of(
            "type", "baseUrl", "model", "apiKeyEnv", "headers", "toolCallMode", "contextSize", "timeoutSeconds");
    private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,127}");
    private static final Pattern HEADER_NAME = Pattern.compile("[!#$%&'*+\\-.^_`|~0-9A-Za-z]{1,128}");
    /** Headers a client may not set: credentials come from the host, the rest belong to HTTP or to this backend. */
    private static final Set<String> FORBIDDEN_HEADERS = Set.of(
            "authorization",
            "proxy-authorization",
            "api-key",
            "x-api-key",
            "connection",
            "content-length",
            "expect",
            "host",
            "upgrade",
            "content-type",
            "accept",
            "transfer-encoding",
            "te");

    Settings {
        headers = Map.copyOf(headers);
    }

    /** The URL for messages: scheme, host, port and path only. */
    String displayUrl() {
        return baseUrl.toString();
    }

    URI resolve(String suffix) {
        return URI.create(baseUrl + suffix);
    }

    /** The client's model object; every error is {@code -32602} naming the member. */
    static Settings parse(ObjectNode spec, String path, Environment environment) throws ModelParameterException {
        for (Iterator<String> it = spec.fieldNames(); it.hasNext(); ) {
            String key = it.next();
            if (!MEMBERS.contains(key)) {
                throw ModelParameterException.invalid(
                        path + "." + key,
                        "is not a member of an openai model (" + String.join(", ", MEMBERS.subList(1, MEMBERS.size()))
                                + ").");
            }
        }
        URI baseUrl = baseUrl(requiredString(spec, path, "baseUrl"), path + ".baseUrl");
        String model = requiredString(spec, path, "model");
        if (model.isBlank() || model.length() > 256) {
            throw ModelParameterException.invalid(
                    path + ".model", "must be the server's model name (1 to 256 characters).");
        }
        String keyEnv = DEFAULT_KEY_ENV;
        Secret key;
        JsonNode keyEnvNode = present(spec, "apiKeyEnv");
        if (keyEnvNode != null) {
            if (!keyEnvNode.isTextual()) {
                throw mistyped(path, "apiKeyEnv", "the name of an environment variable");
            }
            keyEnv = keyEnvNode.textValue();
            if (!ENV_NAME.matcher(keyEnv).matches() || !(keyEnv.startsWith("OAM_") || keyEnv.endsWith("_API_KEY"))) {
                throw ModelParameterException.invalid(
                        path + ".apiKeyEnv",
                        "must name an environment variable that "
                                + "starts with OAM_ or ends with _API_KEY (such as OAM_API_KEY or "
                                + "OPENAI_API_KEY); other variables of "
                                + "the host are not readable from the wire.");
            }
            key = Secret.of(environment.variable(keyEnv));
            if (!key.isPresent()) {
                throw ModelParameterException.invalid(
                        path + ".apiKeyEnv", "names " + keyEnv + ", which is not set in the bridge's environment.");
            }
        } else {
            key = Secret.of(environment.variable(DEFAULT_KEY_ENV));
        }
        Map<String, String> headers = headers(present(spec, "headers"), path + ".headers");
        ToolCallMode mode = ToolCallMode.AUTO;
        JsonNode modeNode = present(spec, "toolCallMode");
        if (modeNode != null) {
            mode = modeNode.isTextual()
                    ? ToolCallMode.parse(modeNode.textValue()).orElse(null)
                    : null;
            if (mode == null) {
                throw mistyped(path, "toolCallMode", "\"native\", \"emulated\" or \"auto\"");
            }
        }
        int contextSize = LanguageModel.DEFAULT_CONTEXT_SIZE;
        JsonNode contextNode = present(spec, "contextSize");
        if (contextNode != null) {
            if (!contextNode.isIntegralNumber()
                    || !contextNode.canConvertToInt()
                    || contextNode.intValue() < MIN_CONTEXT
                    || contextNode.intValue() > MAX_CONTEXT) {
                throw mistyped(
                        path, "contextSize", "an integer from " + MIN_CONTEXT + " to " + MAX_CONTEXT + " (tokens)");
            }
            contextSize = contextNode.intValue();
        }
        Duration timeout = DEFAULT_TIMEOUT;
        JsonNode timeoutNode = present(spec, "timeoutSeconds");
        if (timeoutNode != null) {
            BigDecimal seconds = timeoutNode.isNumber() ? timeoutNode.decimalValue() : null;
            if (seconds == null || seconds.signum() < 0 || seconds.compareTo(BigDecimal.valueOf(86_400)) > 0) {
                throw ModelParameterException.invalid(
                        path + ".timeoutSeconds", "must be a number of seconds from 0 to 86400 (0 means no limit).");
            }
            timeout = Duration.ofNanos(seconds.movePointRight(9).longValue());
        }
        return new Settings(baseUrl, model, keyEnv, key, headers, mode, contextSize, timeout);
    }

    /** The host's system model: {@code --model URL --model-name NAME}, key from {@code OAM_API_KEY}. */
    static Settings system(String location, @Nullable String name, Environment environment) {
        URI baseUrl;
        try {
            baseUrl = baseUrl(location, "--model");
        } catch (ModelParameterException e) {
            throw new IllegalArgumentException("--model " + e.problem(), e);
        }
        return new Settings(
                baseUrl,
                name,
                DEFAULT_KEY_ENV,
                Secret.of(environment.variable(DEFAULT_KEY_ENV)),
                Map.of(),
                ToolCallMode.AUTO,
                LanguageModel.DEFAULT_CONTEXT_SIZE,
                DEFAULT_TIMEOUT);
    }

    static boolean isHttpUrl(String location) {
        String lower = location.strip().toLowerCase(Locale.ROOT);
        return lower.startsWith("http://") || lower.startsWith("https://");
    }

    private static URI baseUrl(String text, String path) throws ModelParameterException {
        URI uri;
        try {
            uri = new URI(text.strip());
        } catch (URISyntaxException e) {
            throw ModelParameterException.invalid(
                    path, "must be an http:// or https:// URL such as " + "http://127.0.0.1:11434/v1.");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null || uri.isOpaque()) {
            throw ModelParameterException.invalid(
                    path, "must be an http:// or https:// URL such as " + "http://127.0.0.1:11434/v1.");
        }
        if (uri.getRawUserInfo() != null) {
            throw ModelParameterException.invalid(
                    path,
                    "must not contain credentials; the API key comes "
                            + "from the host's environment (apiKeyEnv, default OAM_API_KEY).");
        }
        if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
            throw ModelParameterException.invalid(
                    path,
                    "must not have a query or fragment; give the API root " + "such as http://127.0.0.1:11434/v1.");
        }
        String rawPath = uri.getRawPath() == null ? "" : uri.getRawPath();
        while (rawPath.endsWith("/")) {
            rawPath = rawPath.substring(0, rawPath.length() - 1);
        }
        return URI.create(scheme + "://" + uri.getRawAuthority() + rawPath);
    }

    private static Map<String, String> headers(@Nullable JsonNode node, String path) throws ModelParameterException {
        Map<String, String> headers = new LinkedHashMap<>();
        if (node == null) {
            return headers;
        }
        if (!node.isObject()) {
            throw ModelParameterException.invalid(path, "must be an object of header names and string values.");
        }
        for (Iterator<Map.Entry<String, JsonNode>> it = node.properties().iterator(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> header = it.next();
            String name = header.getKey();
            String where = path + "." + name;
            if (!HEADER_NAME.matcher(name).matches()) {
                throw ModelParameterException.invalid(where, "is not a valid HTTP header name.");
            }
            if (FORBIDDEN_HEADERS.contains(name.toLowerCase(Locale.ROOT))) {
                throw ModelParameterException.invalid(
                        where,
                        "cannot be set by a client"
                                + (name.toLowerCase(Locale.ROOT).contains("auth")
                                                || name.toLowerCase(Locale.ROOT).contains("key")
                                        ? ": API keys come from the host's environment (apiKeyEnv, default "
                                                + "OAM_API_KEY)."
                                        : ": the bridge sets it."));
            }
            JsonNode value = header.getValue();
            if (!value.isTextual()
                    || value.textValue().indexOf('\r') >= 0
                    || value.textValue().indexOf('\n') >= 0
                    || value.textValue().length() > 8192) {
                throw ModelParameterException.invalid(where, "must be a string without line breaks.");
            }
            headers.put(name, value.textValue());
        }
        return headers;
    }

    private static @Nullable JsonNode present(ObjectNode spec, String name) {
        JsonNode value = spec.get(name);
        return value == null || value.isNull() ? null : value;
    }

    private static String requiredString(ObjectNode spec, String path, String name) throws ModelParameterException {
        JsonNode value = present(spec, name);
        if (value == null) {
            throw ModelParameterException.missing(path + "." + name, "");
        }
        if (!value.isTextual()) {
            throw mistyped(path, name, "a string");
        }
        return value.textValue();
    }

    private static ModelParameterException mistyped(String path, String name, String expected) {
        return ModelParameterException.invalid(path + "." + name, "must be " + expected + ".");
    }

    @Override
    public String toString() {
        return "Settings[" + baseUrl + ", model=" + model + ", apiKeyEnv=" + apiKeyEnv + ", apiKey=" + apiKey
                + ", headers=" + headers.keySet() + ", toolCallMode=" + toolCallMode.wireName() + ", contextSize="
                + contextSize + "]";
    }
}
