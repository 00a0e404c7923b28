package dev.oam.model.llama;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.ErrorCode;
import dev.oam.core.agent.SamplerCodec;
import dev.oam.core.json.Json;
import dev.oam.core.model.AgentException;
import dev.oam.core.model.DialogueForm;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelAvailability;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.ModelResponse;
import dev.oam.core.model.Sampling;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptCodec;
import dev.oam.core.transcript.TranscriptEntry;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The values the model host protocol carries ({@link ModelHost}, {@link ModelHostMain}), as JSON: one compact JSON
 * object per line in each direction. Requests carry everything {@link ModelRequest} holds (entries in the transcript
 * codec's form, which round-trips exactly; tools and schemas with their converted generation schemas, so the child
 * converts nothing again); answers carry {@link ModelResponse} or an {@link AgentException}.
 */
public final class HostWire {
    /**
     * Writes every non-ASCII character as a {@code \\u} escape, so the line is ASCII and lossless: a model's text can
     * hold unpaired surrogates (a byte token cut in the middle of a UTF-8 sequence), which encoding to UTF-8 would turn
     * into {@code ?}, and the other side would then render and count a different prompt.
     */
    private static final ObjectWriter LINES =
            Json.mapper().writer().with(JsonWriteFeature.ESCAPE_NON_ASCII.mappedFeature());

    private HostWire() {}

    /** One message as a line of the pipe (ASCII, ending in a newline). */
    static byte[] line(ObjectNode message) {
        try {
            return (LINES.writeValueAsString(message) + "\n").getBytes(StandardCharsets.US_ASCII);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    static ObjectNode request(ModelRequest r) {
        ObjectNode o = Json.object();
        o.put("instructions", r.instructions());
        o.put("contextNote", r.contextNote());
        o.set("entries", TranscriptCodec.write("host", null, List.of(), r.entries()));
        o.set("tools", tools(r.tools()));
        o.set("listedTools", tools(r.listedTools()));
        o.put("mode", r.mode().name());
        o.put("offerRespondDirectly", r.offerRespondDirectly());
        o.set("schema", r.schema() == null ? null : schema(r.schema()));
        GenerationOptions options = r.options();
        ObjectNode opts = o.putObject("options");
        opts.put("temperature", options.temperature());
        opts.put("maxResponseTokens", options.maxResponseTokens());
        Sampling sampling = options.sampling();
        if (sampling instanceof Sampling.Greedy) {
            opts.putObject("sampling").put("kind", "greedy");
        } else if (sampling instanceof Sampling.TopK k) {
            opts.putObject("sampling").put("kind", "topK").put("k", k.k()).put("seed", k.seed());
        } else if (sampling instanceof Sampling.TopP p) {
            opts.putObject("sampling").put("kind", "topP").put("p", p.p()).put("seed", p.seed());
        } else if (sampling instanceof Sampling.Chain chain) {
            opts.putObject("sampling").put("kind", "chain").set("chain", SamplerCodec.write(chain));
        }
        opts.put("parallelToolCalls", options.parallelToolCalls());
        DialogueForm dialogue = options.dialogue();
        if (dialogue != null) {
            opts.putObject("dialogue")
                    .put("speaker", dialogue.speaker())
                    .put("listener", dialogue.listener())
                    .put("sentences", dialogue.sentences());
        }
        o.put("inputTokens", r.inputTokens());
        o.put("attempt", r.attempt());
        return o;
    }

    private static @Nullable DialogueForm dialogue(JsonNode d) {
        return d.isObject()
                ? new DialogueForm(
                        d.path("speaker").asText(),
                        d.path("listener").asText(),
                        d.path("sentences").asInt(1))
                : null;
    }

    static ModelRequest request(JsonNode o) {
        List<TranscriptEntry> entries =
                TranscriptCodec.read(o.get("entries"), "entries").entries();
        List<ToolDefinition> tools = tools(o.path("tools"));
        List<ToolDefinition> listed = o.has("listedTools") ? tools(o.path("listedTools")) : tools;
        JsonNode opts = o.path("options");
        Sampling sampling = null;
        JsonNode s = opts.get("sampling");
        if (s != null && s.isObject()) {
            Long seed = s.hasNonNull("seed") ? s.get("seed").longValue() : null;
            sampling = switch (s.path("kind").asText()) {
                case "topK" -> new Sampling.TopK(s.get("k").intValue(), seed);
                case "topP" -> new Sampling.TopP(s.get("p").doubleValue(), seed);
                case "chain" -> SamplerCodec.read(s.get("chain"));
                default -> Sampling.GREEDY;
            };
        }
        GenerationOptions options = new GenerationOptions(
                opts.hasNonNull("temperature") ? opts.get("temperature").doubleValue() : null,
                opts.hasNonNull("maxResponseTokens")
                        ? opts.get("maxResponseTokens").intValue()
                        : null,
                sampling,
                opts.path("parallelToolCalls").asBoolean(false),
                dialogue(opts.path("dialogue")));
        JsonNode schema = o.get("schema");
        return new ModelRequest(
                text(o, "instructions"),
                text(o, "contextNote"),
                entries,
                tools,
                ToolCallingMode.valueOf(o.get("mode").textValue()),
                o.path("offerRespondDirectly").booleanValue(),
                schema == null || schema.isNull() ? null : schema(schema),
                options,
                o.path("inputTokens").intValue(),
                o.path("attempt").intValue(),
                listed);
    }

    private static ArrayNode tools(List<ToolDefinition> list) {
        ArrayNode tools = Json.array();
        for (ToolDefinition tool : list) {
            ObjectNode t = tools.addObject();
            t.put("name", tool.name());
            t.put("description", tool.description());
            t.set("parameters", tool.parameters());
            if (tool.timeout() != null) {
                t.put("timeoutMillis", tool.timeout().toMillis());
            }
            t.set("schema", schema(tool.schema()));
        }
        return tools;
    }

    private static List<ToolDefinition> tools(JsonNode array) {
        List<ToolDefinition> tools = new ArrayList<>();
        for (JsonNode t : array) {
            Duration timeout = t.hasNonNull("timeoutMillis")
                    ? Duration.ofMillis(t.get("timeoutMillis").longValue())
                    : null;
            tools.add(new ToolDefinition(
                    t.get("name").textValue(),
                    text(t, "description"),
                    (ObjectNode) t.get("parameters"),
                    timeout,
                    schema(t.get("schema"))));
        }
        return tools;
    }

    static ObjectNode response(ModelResponse response) {
        ObjectNode o = Json.object();
        o.set("usage", usage(response.usage()));
        if (response instanceof ModelResponse.ToolCalls calls) {
            ArrayNode list = o.putArray("calls");
            for (ToolCall call : calls.calls()) {
                list.addObject().put("id", call.id()).put("name", call.name()).set("arguments", call.arguments());
            }
        } else if (response instanceof ModelResponse.Answer answer) {
            o.put("text", answer.text());
            o.set("structured", answer.structured());
        }
        return o;
    }

    static ModelResponse response(JsonNode o) {
        Usage usage = usage(o.get("usage"));
        if (o.has("calls")) {
            List<ToolCall> calls = new ArrayList<>();
            for (JsonNode c : o.get("calls")) {
                calls.add(new ToolCall(
                        c.get("id").textValue(), c.get("name").textValue(), (ObjectNode) c.get("arguments")));
            }
            return new ModelResponse.ToolCalls(calls, usage);
        }
        JsonNode structured = o.get("structured");
        return new ModelResponse.Answer(
                o.get("text").textValue(), structured == null || structured.isNull() ? null : structured, usage);
    }

    static ObjectNode error(AgentException e) {
        ObjectNode o = Json.object();
        o.put("code", e.code().name());
        o.put("message", e.getMessage());
        o.set("data", e.data());
        o.put("invalidOutput", e.isInvalidOutput());
        o.set("usage", usage(e.usage()));
        return o;
    }

    static AgentException error(JsonNode o) {
        String message = o.path("message").asText();
        AgentException e = o.path("invalidOutput").booleanValue()
                ? AgentException.invalidOutput(message)
                : new AgentException(
                        ErrorCode.valueOf(o.path("code").asText()),
                        message,
                        o.get("data") instanceof ObjectNode data ? data : null);
        return e.withUsage(usage(o.get("usage")));
    }

    static ObjectNode availability(ModelAvailability a) {
        ObjectNode o = Json.object();
        o.put("available", a.available());
        o.put("reason", a.reason());
        o.put("message", a.message());
        o.put("contextSize", a.contextSize());
        if (a.device() != null) {
            o.put("device", a.device());
        }
        o.put("variant", a.variant());
        ArrayNode languages = o.putArray("supportedLanguages");
        a.supportedLanguages().forEach(languages::add);
        return o;
    }

    static ModelAvailability availability(JsonNode o) {
        List<String> languages = new ArrayList<>();
        o.path("supportedLanguages").forEach(l -> languages.add(l.asText()));
        return new ModelAvailability(
                o.path("available").booleanValue(),
                text(o, "reason"),
                text(o, "message"),
                o.hasNonNull("contextSize") ? o.get("contextSize").intValue() : null,
                text(o, "variant"),
                languages,
                text(o, "device"));
    }

    static ObjectNode entry(TranscriptEntry entry) {
        return TranscriptCodec.write("host", null, List.of(), List.of(entry));
    }

    static TranscriptEntry entry(JsonNode o) {
        return TranscriptCodec.read(o, "entry").entries().get(0);
    }

    private static ObjectNode schema(GenerationSchema schema) {
        ObjectNode o = Json.object();
        o.set("json", schema.json());
        ArrayNode warnings = o.putArray("warnings");
        schema.warnings().forEach(warnings::add);
        return o;
    }

    private static GenerationSchema schema(JsonNode o) {
        List<String> warnings = new ArrayList<>();
        o.path("warnings").forEach(w -> warnings.add(w.asText()));
        return new GenerationSchema((ObjectNode) o.get("json"), warnings);
    }

    private static ArrayNode usage(Usage usage) {
        ArrayNode a = Json.mapper().createArrayNode();
        return a.add(usage.inputTokens()).add(usage.cachedInputTokens()).add(usage.outputTokens());
    }

    private static Usage usage(@Nullable JsonNode a) {
        return a == null || !a.isArray()
                ? Usage.ZERO
                : new Usage(
                        a.path(0).intValue(), a.path(1).intValue(), a.path(2).intValue());
    }

    private static @Nullable String text(JsonNode o, String name) {
        JsonNode v = o.get(name);
        return v == null || v.isNull() ? null : v.asText();
    }
}
