package dev.oam.model.openai;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.model.GenerationOptions;
import dev.oam.core.model.ModelRequest;
import dev.oam.core.model.Sampling;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Builds the Chat Completions body of one model step: the transcript as messages, the step's tools and
 * {@code tool_choice} (native), or a schema of the allowed calls (emulated), the answer's schema (each schema in the
 * endpoint's {@link SchemaFormat}) and the sampling options.
 */
final class ChatRequests {
    /** The {@code response_format} name of an emulated step. */
    static final String EMULATION_NAME = "ToolCall";

    private ChatRequests() {}

    /**
     * Tokens a step that must call a tool may take when the session sets no {@code maxResponseTokens}: a call is a name
     * and a few arguments (tens of tokens), so this only stops a model that never closes its JSON.
     */
    static final int DEFAULT_CALL_TOKENS = 256;
    /** Tokens a free-text answer may take by default (the embedded backend's {@code DEFAULT_TEXT_TOKENS}). */
    static final int DEFAULT_TEXT_TOKENS = 512;
    /** Tokens a JSON-schema answer may take by default (the embedded backend's {@code DEFAULT_GRAMMAR_TOKENS}). */
    static final int DEFAULT_STRUCTURED_TOKENS = 1024;

    /**
     * The step's {@code max_tokens}: {@code maxResponseTokens}, else a default by what the step may write. A forced
     * step writes only a call ({@link #DEFAULT_CALL_TOKENS}); a step that may answer gets the answer's budget
     * ({@link #DEFAULT_STRUCTURED_TOKENS} for a schema, else {@link #DEFAULT_TEXT_TOKENS}), which a call fits too.
     */
    static int maxTokens(ModelRequest request) {
        Integer configured = request.options().maxResponseTokens();
        if (configured != null) {
            return configured;
        }
        if (request.mode() == ToolCallingMode.REQUIRED) {
            return DEFAULT_CALL_TOKENS;
        }
        return request.schema() != null ? DEFAULT_STRUCTURED_TOKENS : DEFAULT_TEXT_TOKENS;
    }

    /**
     * The budget a tool's string arguments are bounded by: the same in every step of a session (not the step's
     * {@link #maxTokens}), so the tools a server renders into the prompt do not change between steps and a server that
     * caches by prefix keeps its cache.
     */
    static int callTokens(ModelRequest request) {
        Integer configured = request.options().maxResponseTokens();
        return configured != null ? configured : DEFAULT_CALL_TOKENS;
    }

    /** A step with OpenAI's own {@code tools} / {@code tool_choice} (or no tools when the step disallows them). */
    static ObjectNode nativeBody(
            ModelRequest request,
            @Nullable String model,
            boolean stream,
            boolean textHistory,
            SchemaFormat format,
            boolean llamaCpp) {
        GenerationSchema schema = request.schema();
        boolean answerMayFollow = request.mode() != ToolCallingMode.REQUIRED;
        String extra = schema != null && answerMayFollow ? schemaGuidance(schema) : null;
        ObjectNode body = base(request, model, stream, textHistory, extra, llamaCpp);
        if (request.mode() != ToolCallingMode.DISALLOWED) {
            ArrayNode tools = body.putArray("tools");
            for (ToolDefinition tool : request.tools()) {
                // llama-server turns parameters into a grammar too, where an unbounded string can run to the limit
                tools.add(function(
                        tool.name(), tool.description(), bounded(tool.schema().json(), callTokens(request))));
            }
            if (request.offerRespondDirectly()) {
                tools.add(function(
                        ToolDefinition.RESPOND_DIRECTLY,
                        ToolDefinition.RESPOND_DIRECTLY_DESCRIPTION,
                        emptyObjectSchema()));
            }
            if (request.mode() == ToolCallingMode.REQUIRED) {
                if (tools.size() == 1) {
                    ObjectNode named = body.putObject("tool_choice");
                    named.put("type", "function");
                    named.putObject("function")
                            .put(
                                    "name",
                                    tools.get(0).path("function").path("name").textValue());
                } else {
                    body.put("tool_choice", "required");
                }
            } else {
                body.put("tool_choice", "auto");
            }
            body.put("parallel_tool_calls", request.options().parallelToolCalls());
        }
        if (schema != null && answerMayFollow) {
            format.apply(body, "Response", bounded(schema.json(), maxTokens(request)));
        }
        return body;
    }

    /**
     * A step whose tool calls come as JSON constrained by {@code response_format}: one branch per allowed tool
     * ({@code {"name": that tool, "arguments": its parameters}}), plus {@code {"answer": …}} when the step may answer
     * instead, plus {@code {"calls": [those calls]}} when the step may call several tools at once.
     */
    static ObjectNode emulatedBody(
            ModelRequest request,
            @Nullable String model,
            boolean stream,
            boolean textHistory,
            SchemaFormat format,
            boolean llamaCpp) {
        boolean mayAnswer = request.mode() == ToolCallingMode.ALLOWED;
        ObjectNode body = base(request, model, stream, textHistory, emulationGuidance(request, mayAnswer), llamaCpp);
        format.apply(body, EMULATION_NAME, emulationSchema(request, mayAnswer));
        return body;
    }

    /**
     * The longest free string sent when the session sets no token limit (the embedded backend's {@code MAX_STRING}).
     */
    static final int DEFAULT_MAX_STRING = 256;

    /**
     * A copy of {@code schema} whose free strings (no {@code enum}, {@code const} or {@code maxLength}) carry a
     * {@code maxLength} that lets the whole value fit {@code maxTokens}: about half the tokens shared among the free
     * strings, at least 16 characters each and at most {@link #DEFAULT_MAX_STRING}. Servers that constrain output by
     * grammar (llama-server) otherwise let a small model write one string until the limit cuts the JSON off, and the
     * step fails; the embedded backend bounds its grammar's strings the same way.
     */
    static JsonNode bounded(JsonNode schema, int maxTokens) {
        JsonNode copy = schema.deepCopy();
        List<ObjectNode> free = new ArrayList<>();
        freeStrings(copy, free, 0);
        if (free.isEmpty()) {
            return copy;
        }
        int cap = Math.max(16, Math.min(DEFAULT_MAX_STRING, maxTokens / 2 / free.size()));
        for (ObjectNode string : free) {
            // never below a minLength the game layer holds the model to (a decision's reason)
            string.put("maxLength", Math.max(cap, string.path("minLength").asInt(0)));
        }
        return copy;
    }

    private static void freeStrings(JsonNode node, List<ObjectNode> found, int depth) {
        if (depth > 64) {
            return;
        }
        if (node instanceof ObjectNode object) {
            if ("string".equals(object.path("type").asText())
                    && !object.has("enum")
                    && !object.has("const")
                    && !object.has("maxLength")) {
                found.add(object);
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = object.properties().iterator(); it.hasNext(); ) {
                freeStrings(it.next().getValue(), found, depth + 1);
            }
        } else if (node instanceof ArrayNode array) {
            for (JsonNode item : array) {
                freeStrings(item, found, depth + 1);
            }
        }
    }

    /** The schema a body built here constrains its answer with ({@code null} when it has none). */
    static @Nullable JsonNode constraint(ObjectNode body) {
        JsonNode format = body.path("response_format");
        if (format.path("json_schema").has("schema")) {
            return format.path("json_schema").get("schema");
        }
        if (format.has("schema")) {
            return format.get("schema");
        }
        for (String member : List.of("json_schema", "guided_json", "format")) {
            if (body.get(member) instanceof ObjectNode schema) {
                return schema;
            }
        }
        return null;
    }

    /**
     * The emulated step's schema. Each tool's free strings are bounded by {@link #callTokens} (each call on its own:
     * only one branch is written), the answer's by the step's {@link #maxTokens}.
     */
    static ObjectNode emulationSchema(ModelRequest request, boolean mayAnswer) {
        ObjectNode defs = Json.object();
        ArrayNode calls = Json.array();
        int i = 0;
        for (ToolDefinition tool : request.tools()) {
            JsonNode parameters = bounded(tool.schema().json(), callTokens(request));
            calls.add(callBranch(tool.name(), hoist((ObjectNode) parameters, "t" + i++ + "_", defs)));
        }
        if (request.offerRespondDirectly()) {
            calls.add(callBranch(ToolDefinition.RESPOND_DIRECTLY, emptyObjectSchema()));
        }
        ArrayNode branches = calls.deepCopy();
        if (request.options().parallelToolCalls() && !request.tools().isEmpty()) {
            ObjectNode several = Json.object();
            several.put("type", "object");
            ObjectNode list = several.putObject("properties").putObject("calls");
            list.put("type", "array");
            list.put("minItems", 1);
            if (calls.size() == 1) {
                list.set("items", calls.get(0));
            } else {
                list.putObject("items").set("anyOf", calls);
            }
            several.putArray("required").add("calls");
            several.put("additionalProperties", false);
            branches.add(several);
        }
        if (mayAnswer) {
            GenerationSchema schema = request.schema();
            ObjectNode answer = Json.object();
            answer.put("type", "object");
            JsonNode answerSchema = schema == null ? Json.object().put("type", "string") : schema.json();
            answerSchema = bounded(answerSchema, maxTokens(request));
            answer.putObject("properties")
                    .set(
                            "answer",
                            answerSchema instanceof ObjectNode object && schema != null
                                    ? hoist(object, "answer_", defs)
                                    : answerSchema);
            answer.putArray("required").add("answer");
            answer.put("additionalProperties", false);
            branches.add(answer);
        }
        ObjectNode root;
        if (branches.size() == 1) {
            root = (ObjectNode) branches.get(0);
        } else {
            root = Json.object();
            root.set("anyOf", branches);
        }
        if (!defs.isEmpty()) {
            root.set("$defs", defs);
        }
        return root;
    }

    private static ObjectNode callBranch(String name, JsonNode parameters) {
        ObjectNode branch = Json.object();
        branch.put("type", "object");
        ObjectNode properties = branch.putObject("properties");
        ObjectNode nameSchema = properties.putObject("name");
        nameSchema.put("type", "string");
        nameSchema.putArray("enum").add(name);
        properties.set("arguments", parameters);
        branch.putArray("required").add("name").add("arguments");
        branch.put("additionalProperties", false);
        return branch;
    }

    /**
     * A copy of {@code schema} whose {@code $defs} move into {@code defs} under {@code prefix}, with every
     * {@code #/$defs/…} reference renamed, so several schemas can live in one document.
     */
    static JsonNode hoist(ObjectNode schema, String prefix, ObjectNode defs) {
        ObjectNode copy = schema.deepCopy();
        JsonNode own = copy.remove("$defs");
        if (own != null && own.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = own.properties().iterator(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> def = it.next();
                defs.set(prefix + def.getKey(), renameRefs(def.getValue().deepCopy(), prefix));
            }
        }
        return renameRefs(copy, prefix);
    }

    private static JsonNode renameRefs(JsonNode node, String prefix) {
        if (node instanceof ObjectNode object) {
            JsonNode ref = object.get("$ref");
            if (ref != null && ref.isTextual() && ref.textValue().startsWith("#/$defs/")) {
                object.put("$ref", "#/$defs/" + prefix + ref.textValue().substring("#/$defs/".length()));
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = object.properties().iterator(); it.hasNext(); ) {
                renameRefs(it.next().getValue(), prefix);
            }
        } else if (node instanceof ArrayNode array) {
            for (JsonNode item : array) {
                renameRefs(item, prefix);
            }
        }
        return node;
    }

    private static ObjectNode base(
            ModelRequest request,
            @Nullable String model,
            boolean stream,
            boolean textHistory,
            @Nullable String extra,
            boolean llamaCpp) {
        ObjectNode body = Json.object();
        if (model != null) {
            body.put("model", model);
        }
        body.set("messages", messages(request, textHistory, extra));
        options(body, request.options(), llamaCpp);
        body.put("max_tokens", maxTokens(request));
        if (llamaCpp) {
            // llama.cpp's own member (other servers may refuse it): reuse the slot's cached prefix of the prompt
            body.put("cache_prompt", true);
        }
        body.put("stream", stream);
        if (stream) {
            body.putObject("stream_options").put("include_usage", true);
        }
        return body;
    }

    static void options(ObjectNode body, GenerationOptions options) {
        options(body, options, true);
    }

    /**
     * The step's sampling. A {@link Sampling.Chain}'s members that only llama.cpp's server reads ({@link #llamaOnly})
     * go to it alone: some servers refuse members they do not know.
     */
    static void options(ObjectNode body, GenerationOptions options, boolean llamaCpp) {
        if (options.temperature() != null) {
            body.put("temperature", options.temperature());
        }
        switch (options.sampling()) {
            case null -> {}
            case Sampling.Greedy greedy -> body.put("temperature", 0);
            case Sampling.TopK topK -> {
                body.put("top_k", topK.k());
                if (topK.seed() != null) {
                    body.put("seed", topK.seed());
                }
            }
            case Sampling.TopP topP -> {
                body.put("top_p", topP.p());
                if (topP.seed() != null) {
                    body.put("seed", topP.seed());
                }
            }
            case Sampling.Chain chain -> chain(body, chain, llamaCpp);
        }
    }

    /**
     * Members of a sampler chain that only llama.cpp's server is known to read (by these names), sent to it alone: the
     * OpenAI API takes {@code top_p}, {@code presence_penalty}, {@code frequency_penalty} and {@code seed}; vLLM also
     * {@code top_k} and {@code min_p}.
     */
    static List<String> llamaOnly(@Nullable Sampling sampling) {
        if (!(sampling instanceof Sampling.Chain c)) {
            return List.of();
        }
        List<String> names = new ArrayList<>();
        if (c.minP() != null) {
            names.add("min_p");
        }
        if (c.typicalP() != null) {
            names.add("typical_p");
        }
        if (c.repeatPenalty() != null) {
            names.add("repeat_penalty");
        }
        if (c.repeatLastN() != null) {
            names.add("repeat_last_n");
        }
        if (c.dry() != null) {
            names.add("dry_*");
        }
        if (c.xtc() != null) {
            names.add("xtc_*");
        }
        return names;
    }

    /**
     * The members the chain sets, by llama-server's names ({@code /v1/chat/completions} takes them all); to another
     * server only {@code top_k} (sent for the original {@code sampling} too), {@code top_p}, the presence and frequency
     * penalties and {@code seed}.
     */
    private static void chain(ObjectNode body, Sampling.Chain c, boolean llamaCpp) {
        if (c.topK() != null) {
            body.put("top_k", c.topK());
        }
        if (c.topP() != null) {
            body.put("top_p", c.topP());
        }
        if (c.presencePenalty() != null) {
            body.put("presence_penalty", c.presencePenalty());
        }
        if (c.frequencyPenalty() != null) {
            body.put("frequency_penalty", c.frequencyPenalty());
        }
        if (c.seed() != null) {
            body.put("seed", c.seed());
        }
        if (!llamaCpp) {
            return;
        }
        if (c.minP() != null) {
            body.put("min_p", c.minP());
        }
        if (c.typicalP() != null) {
            body.put("typical_p", c.typicalP());
        }
        if (c.repeatPenalty() != null) {
            body.put("repeat_penalty", c.repeatPenalty());
        }
        if (c.repeatLastN() != null) {
            body.put("repeat_last_n", c.repeatLastN());
        }
        Sampling.Dry dry = c.dry();
        if (dry != null) {
            body.put("dry_multiplier", dry.multiplier());
            body.put("dry_base", dry.base());
            body.put("dry_allowed_length", dry.allowedLength());
            body.put("dry_penalty_last_n", dry.penaltyLastN());
            ArrayNode breakers = body.putArray("dry_sequence_breakers");
            dry.breakers().forEach(breakers::add);
        }
        Sampling.Xtc xtc = c.xtc();
        if (xtc != null) {
            body.put("xtc_probability", xtc.probability());
            body.put("xtc_threshold", xtc.threshold());
        }
    }

    /**
     * The conversation as messages. With {@code textHistory} (endpoints whose tools are emulated), tool calls are the
     * assistant's JSON and tool outputs a user message, since such servers may not accept tool messages; consecutive
     * user messages are then merged, as strict chat templates require alternating roles.
     */
    static ArrayNode messages(ModelRequest request, boolean textHistory, @Nullable String extra) {
        ArrayNode messages = Json.array();
        List<String> system = new ArrayList<>();
        addIfPresent(system, request.instructions());
        addIfPresent(system, request.contextNote());
        addIfPresent(system, extra);
        if (!system.isEmpty()) {
            messages.addObject().put("role", "system").put("content", String.join("\n\n", system));
        }
        for (TranscriptEntry entry : request.entries()) {
            switch (entry) {
                case TranscriptEntry.Prompt prompt -> user(messages, prompt.text(), textHistory);
                case TranscriptEntry.Response response ->
                    messages.addObject().put("role", "assistant").put("content", response.text());
                case TranscriptEntry.ToolCalls calls -> {
                    if (textHistory) {
                        List<String> lines = new ArrayList<>();
                        for (ToolCall call : calls.calls()) {
                            lines.add(Json.write(callJson(call)));
                        }
                        messages.addObject().put("role", "assistant").put("content", String.join("\n", lines));
                    } else {
                        ObjectNode message = messages.addObject();
                        message.put("role", "assistant");
                        message.put("content", "");
                        ArrayNode toolCalls = message.putArray("tool_calls");
                        for (ToolCall call : calls.calls()) {
                            ObjectNode item = toolCalls.addObject();
                            item.put("id", call.id());
                            item.put("type", "function");
                            item.putObject("function")
                                    .put("name", call.name())
                                    .put("arguments", Json.write(call.arguments()));
                        }
                    }
                }
                case TranscriptEntry.ToolOutput output -> {
                    if (textHistory) {
                        user(messages, "Output of the tool " + output.toolName() + ": " + output.text(), true);
                    } else {
                        messages.addObject()
                                .put("role", "tool")
                                .put("tool_call_id", output.callId())
                                .put("content", output.text());
                    }
                }
            }
        }
        return messages;
    }

    private static void user(ArrayNode messages, String text, boolean merge) {
        if (merge && !messages.isEmpty()) {
            JsonNode last = messages.get(messages.size() - 1);
            if ("user".equals(last.path("role").asText())
                    && last.path("content").isTextual()) {
                String previous = last.path("content").textValue();
                ((ObjectNode) last)
                        .put(
                                "content",
                                previous.isEmpty() ? text : text.isEmpty() ? previous : previous + "\n\n" + text);
                return;
            }
        }
        messages.addObject().put("role", "user").put("content", text);
    }

    static ObjectNode callJson(ToolCall call) {
        ObjectNode node = Json.object();
        node.put("name", call.name());
        node.set("arguments", call.arguments());
        return node;
    }

    private static void addIfPresent(List<String> parts, @Nullable String text) {
        if (text != null && !text.isBlank()) {
            parts.add(text.strip());
        }
    }

    private static ObjectNode function(String name, @Nullable String description, JsonNode parameters) {
        ObjectNode tool = Json.object();
        tool.put("type", "function");
        ObjectNode function = tool.putObject("function");
        function.put("name", name);
        // llama-server rejects a tool without a description.
        function.put("description", description == null || description.isBlank() ? name : description);
        function.set("parameters", parameters);
        return tool;
    }

    private static ObjectNode emptyObjectSchema() {
        ObjectNode schema = Json.object();
        schema.put("type", "object");
        schema.putObject("properties");
        schema.put("additionalProperties", false);
        return schema;
    }

    private static String schemaGuidance(GenerationSchema schema) {
        return "Your answer must be a JSON value that follows this JSON Schema: " + Json.write(schema.json());
    }

    private static String emulationGuidance(ModelRequest request, boolean mayAnswer) {
        StringBuilder out = new StringBuilder(
                ToolDefinition.promptListing(request.tools(), request.offerRespondDirectly(), "Arguments:"));
        out.append("\nReply with one JSON object and nothing else. To call a tool: {\"name\": \"<tool name>\", "
                + "\"arguments\": {…}}.");
        if (request.options().parallelToolCalls() && !request.tools().isEmpty()) {
            out.append("\nTo call several tools at once: {\"calls\": [{\"name\": \"<tool name>\", "
                    + "\"arguments\": {…}}, …]}.");
        }
        if (mayAnswer) {
            GenerationSchema schema = request.schema();
            out.append(
                    schema == null
                            ? "\nTo answer without calling a tool: {\"answer\": \"<your answer>\"}."
                            : "\nTo answer without calling a tool: {\"answer\": <a JSON value that follows "
                                    + "this JSON Schema: " + Json.write(schema.json()) + ">}.");
        } else {
            out.append("\nCall one of these tools now.");
        }
        return out.toString();
    }
}
