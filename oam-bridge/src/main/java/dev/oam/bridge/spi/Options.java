package dev.oam.bridge.spi;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.SamplerCodec;
import dev.oam.core.agent.ToolChoice;
import dev.oam.core.model.Sampling;
import dev.oam.core.tool.ToolDefinition;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Reads session options, tool choices and sampling settings. */
public final class Options {
    private Options() {}

    /** Reads the {@code options} table of {@code session/create}; unread keys stay for the warnings. */
    public static AgentOptions agentOptions(Params options, Duration defaultToolTimeout) throws BridgeException {
        AgentOptions defaults = AgentOptions.defaults(defaultToolTimeout);
        ToolChoice choice = toolChoice(options, "toolChoice");
        Integer rounds = options.optionalInt("maxToolRounds", 0);
        Integer calls = options.optionalInt("maxToolCalls", 0);
        List<String> enabled = options.optionalStringList("enabledTools");
        Double temperature = options.optionalNumber("temperature", 0);
        Integer maxTokens = options.optionalInt("maxResponseTokens", 1);
        Sampling sampling = sampling(options);
        Duration timeout = options.optionalSeconds("toolTimeoutSeconds");
        Boolean trim = options.optionalBool("trimHistory");
        Integer reserved = options.optionalInt("reservedResponseTokens", 0);
        Integer attempts = options.optionalInt("maxAttempts", 1);
        Boolean parallel = options.optionalBool("parallelToolCalls");
        return new AgentOptions(
                choice != null ? choice : defaults.toolChoice(),
                rounds != null ? rounds : defaults.maxToolRounds(),
                calls != null ? calls : defaults.maxToolCalls(),
                enabled,
                temperature,
                maxTokens,
                sampling,
                timeout != null ? timeout : defaults.toolTimeout(),
                trim != null ? trim : defaults.trimHistory(),
                reserved != null ? reserved : defaults.reservedResponseTokens(),
                attempts != null ? attempts : defaults.maxAttempts(),
                parallel != null ? parallel : defaults.parallelToolCalls());
    }

    public static @Nullable ToolChoice toolChoice(Params params, String name) throws BridgeException {
        JsonNode value = params.get(name);
        if (value == null) {
            return null;
        }
        if (value.isTextual()) {
            switch (value.textValue()) {
                case "auto":
                    return ToolChoice.AUTO;
                case "none":
                    return ToolChoice.NONE;
                case "required":
                    return ToolChoice.REQUIRED;
                case "explicit":
                    return ToolChoice.EXPLICIT;
                default:
                    break;
            }
        } else if (value.isObject() && value.size() == 1 && value.has("tool")) {
            JsonNode tool = value.get("tool");
            if (tool.isTextual() && ToolDefinition.isValidName(tool.textValue())) {
                return new ToolChoice.Named(tool.textValue());
            }
        }
        throw BridgeException.invalidParams("Parameter '" + params.path(name)
                + "' must be \"auto\", \"none\", \"required\", \"explicit\" or {\"tool\": \"<tool name>\"}.");
    }

    /**
     * Reads {@code sampling} (the original's: {@code "greedy"}, {@code {topK, seed?}} or {@code {topP, seed?}}) and
     * {@code sampler} (this edition's extension: the whole chain, {@link SamplerCodec}); a {@code sampler} is laid over
     * the {@code sampling} when both are given.
     */
    public static @Nullable Sampling sampling(Params params) throws BridgeException {
        Sampling sampling = sampling(params, "sampling");
        JsonNode value = params.get("sampler");
        if (value == null) {
            return sampling;
        }
        Sampling.Chain chain;
        try {
            chain = SamplerCodec.read(value);
        } catch (IllegalArgumentException e) {
            String message = e.getMessage();
            int space = message.indexOf(' ');
            if (message.startsWith("must ") || space < 0) {
                throw BridgeException.invalidParams("Parameter '" + params.path("sampler") + "' " + message);
            }
            throw BridgeException.invalidParams("Parameter '" + params.path("sampler") + "."
                    + message.substring(0, space) + "'" + message.substring(space));
        }
        return sampling == null ? chain : Sampling.Chain.of(sampling).with(chain);
    }

    public static @Nullable Sampling sampling(Params params, String name) throws BridgeException {
        JsonNode value = params.get(name);
        if (value == null) {
            return null;
        }
        String expected = "\"greedy\", {\"topK\": n, \"seed\"?: n} or {\"topP\": p, \"seed\"?: n}";
        if (value.isTextual() && value.textValue().equals("greedy")) {
            return Sampling.GREEDY;
        }
        if (!value.isObject()) {
            throw params.mistyped(name, expected);
        }
        Params sampling = Params.of((com.fasterxml.jackson.databind.node.ObjectNode) value);
        Long seed = null;
        JsonNode seedNode = sampling.get("seed");
        if (seedNode != null) {
            if (!seedNode.isIntegralNumber() || !seedNode.canConvertToLong()) {
                throw BridgeException.invalidParams("Parameter '" + params.path(name) + ".seed' must be an integer.");
            }
            seed = seedNode.longValue();
        }
        boolean hasK = sampling.has("topK");
        boolean hasP = sampling.has("topP");
        if (hasK == hasP) {
            throw params.mistyped(name, expected);
        }
        if (hasK) {
            JsonNode k = sampling.get("topK");
            if (!k.isNumber()
                    || k.decimalValue().compareTo(BigDecimal.ONE) < 0
                    || k.decimalValue().compareTo(BigDecimal.valueOf(Integer.MAX_VALUE)) > 0
                    || k.decimalValue().stripTrailingZeros().scale() > 0) {
                throw BridgeException.invalidParams(
                        "Parameter '" + params.path(name) + ".topK' must be an integer ≥ 1.");
            }
            return new Sampling.TopK(k.decimalValue().intValue(), seed);
        }
        JsonNode p = sampling.get("topP");
        double pValue = p.isNumber() ? p.doubleValue() : Double.NaN;
        if (!(pValue > 0 && pValue <= 1)) {
            throw BridgeException.invalidParams(
                    "Parameter '" + params.path(name) + ".topP' must be a number in (0, 1].");
        }
        return new Sampling.TopP(pValue, seed);
    }
}
