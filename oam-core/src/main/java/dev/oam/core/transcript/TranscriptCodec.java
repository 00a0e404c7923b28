package dev.oam.core.transcript;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The FoundationModels-compatible transcript form (docs/PROTOCOL.md, "The transcript format"): written by
 * {@code session/transcript}, read by {@code session/create} {@code history}. Reading is lenient about unknown fields
 * and missing ids and strict about everything it needs.
 */
public final class TranscriptCodec {
    public static final String TYPE = "FoundationModels.Transcript";
    public static final String VERSION = "1.1";

    private TranscriptCodec() {}

    /** What a transcript restores. {@code tools} are the raw definitions ({@code null} when none were saved). */
    public record Restored(
            boolean hasInstructionsEntry,
            @Nullable String instructions,
            @Nullable ArrayNode tools,
            String instructionsEntryId,
            List<TranscriptEntry> entries) {}

    public static ObjectNode write(
            String instructionsEntryId,
            @Nullable String instructions,
            List<ToolDefinition> tools,
            List<TranscriptEntry> entries) {
        ArrayNode out = Json.array();
        if (instructions != null || !tools.isEmpty()) {
            ObjectNode entry = out.addObject();
            entry.put("id", instructionsEntryId);
            entry.put("role", "instructions");
            ArrayNode contents = entry.putArray("contents");
            if (instructions != null) {
                contents.add(text(instructionsEntryId + "-text", instructions));
            }
            ArrayNode toolArray = entry.putArray("tools");
            for (ToolDefinition tool : tools) {
                ObjectNode wrapper = toolArray.addObject();
                wrapper.put("type", "function");
                ObjectNode function = wrapper.putObject("function");
                function.put("name", tool.name());
                if (tool.description() != null) {
                    function.put("description", tool.description());
                }
                function.set("parameters", tool.parameters());
            }
        }
        for (TranscriptEntry entry : entries) {
            out.add(write(entry));
        }
        ObjectNode transcript = Json.object();
        transcript.put("type", TYPE);
        transcript.put("version", VERSION);
        transcript.putObject("transcript").set("entries", out);
        return transcript;
    }

    /**
     * The size of one entry's transcript JSON in {@link dev.oam.core.json.JsonSize} units (what the history caps
     * count).
     */
    public static long size(TranscriptEntry entry) {
        return dev.oam.core.json.JsonSize.of(write(entry));
    }

    /** The size of these entries' transcript JSON, as {@link #size(TranscriptEntry)} adds up. */
    public static long size(List<TranscriptEntry> entries) {
        long total = 0;
        for (TranscriptEntry entry : entries) {
            total += size(entry);
        }
        return total;
    }

    private static ObjectNode write(TranscriptEntry entry) {
        ObjectNode node = Json.object();
        node.put("id", entry.id());
        switch (entry) {
            case TranscriptEntry.Prompt prompt -> {
                node.put("role", "user");
                node.putArray("contents").add(text(prompt.contentId(), prompt.text()));
                node.putObject("options");
                if (prompt.schema() != null) {
                    ObjectNode format = node.putObject("responseFormat");
                    format.put("type", "jsonSchema");
                    ObjectNode jsonSchema = format.putObject("jsonSchema");
                    jsonSchema.put("name", prompt.schemaName() == null ? "Response" : prompt.schemaName());
                    jsonSchema.set("schema", prompt.schema());
                }
            }
            case TranscriptEntry.ToolCalls calls -> {
                node.put("role", "response");
                node.putArray("contents");
                node.putArray("assets");
                ArrayNode array = node.putArray("toolCalls");
                for (ToolCall call : calls.calls()) {
                    ObjectNode c = array.addObject();
                    c.put("id", call.id());
                    c.put("name", call.name());
                    c.put("arguments", Json.write(call.arguments()));
                }
            }
            case TranscriptEntry.ToolOutput output -> {
                node.put("role", "tool");
                node.put("toolName", output.toolName());
                node.put("toolCallID", output.callId());
                node.putArray("contents").add(text(output.contentId(), output.text()));
            }
            case TranscriptEntry.Response response -> {
                node.put("role", "response");
                node.putArray("assets");
                ArrayNode contents = node.putArray("contents");
                if (response.structured() != null) {
                    ObjectNode content = contents.addObject();
                    content.put("type", "structure");
                    content.put("id", response.contentId());
                    ObjectNode structure = content.putObject("structure");
                    structure.put("source", response.schemaName() == null ? "Response" : response.schemaName());
                    structure.set("content", response.structured());
                } else {
                    contents.add(text(response.contentId(), response.text()));
                }
            }
        }
        return node;
    }

    private static ObjectNode text(String id, String text) {
        ObjectNode content = Json.object();
        content.put("type", "text");
        content.put("id", id);
        content.put("text", text);
        return content;
    }

    /**
     * Reads a transcript: the {@code transcript} value of {@code session/transcript}, or its whole result.
     *
     * @param path the parameter's name for messages ({@code history})
     * @throws IllegalArgumentException naming the bad field in single quotes
     */
    public static Restored read(JsonNode value, String path) {
        JsonNode node = value;
        String at = path;
        for (int level = 0;
                level < 2
                        && node.isObject()
                        && !node.has("entries")
                        && node.path("transcript").isObject();
                level++) {
            checkHeader(node, at);
            node = node.get("transcript");
            at = at + ".transcript";
        }
        if (!node.isObject()) {
            throw bad(
                    path,
                    "must be a transcript object (the 'transcript' value of session/transcript, or its whole result)");
        }
        if (node.has("type") || node.has("version")) {
            checkHeader(node, at);
        }
        JsonNode entries = node.get("entries");
        if (entries == null || !entries.isArray()) {
            throw bad(at + ".entries", "must be an array of transcript entries");
        }
        boolean hasInstructions = false;
        String instructions = null;
        ArrayNode tools = null;
        String instructionsId = TranscriptEntry.newId();
        List<TranscriptEntry> out = new ArrayList<>();
        for (int i = 0; i < entries.size(); i++) {
            String p = at + ".entries[" + i + "]";
            JsonNode entry = entries.get(i);
            if (!entry.isObject()) {
                throw bad(p, "must be an object");
            }
            String id = optionalString(entry, "id", p);
            if (id == null) {
                id = TranscriptEntry.newId();
            }
            String role = requiredString(entry, "role", p);
            switch (role) {
                case "instructions" -> {
                    if (i != 0) {
                        throw bad(p + ".role", "'instructions' may only be the first entry");
                    }
                    hasInstructions = true;
                    instructionsId = id;
                    List<String> texts = texts(entry, p, true);
                    instructions = texts.isEmpty() ? null : String.join("\n", texts);
                    JsonNode toolsNode = entry.get("tools");
                    if (toolsNode != null && !toolsNode.isNull()) {
                        if (!toolsNode.isArray()) {
                            throw bad(p + ".tools", "must be an array of tool definitions");
                        }
                        tools = (ArrayNode) toolsNode;
                    }
                }
                case "user" -> {
                    String contentId = firstContentId(entry);
                    JsonNode schema = null;
                    String schemaName = null;
                    JsonNode format = entry.get("responseFormat");
                    if (format != null && !format.isNull()) {
                        JsonNode jsonSchema = format.get("jsonSchema");
                        if (jsonSchema == null || !jsonSchema.path("schema").isObject()) {
                            throw bad(p + ".responseFormat.jsonSchema.schema", "must be a JSON Schema object");
                        }
                        schema = jsonSchema.get("schema");
                        schemaName = jsonSchema.path("name").asText("Response");
                    }
                    out.add(new TranscriptEntry.Prompt(
                            id, contentId, String.join("\n", texts(entry, p, false)), schema, schemaName));
                }
                case "response" -> {
                    JsonNode calls = entry.get("toolCalls");
                    if (calls != null && !calls.isNull() && !(calls.isArray() && calls.isEmpty())) {
                        if (!calls.isArray()) {
                            throw bad(p + ".toolCalls", "must be an array of tool calls");
                        }
                        List<ToolCall> parsed = new ArrayList<>();
                        for (int k = 0; k < calls.size(); k++) {
                            parsed.add(call(calls.get(k), p + ".toolCalls[" + k + "]"));
                        }
                        out.add(new TranscriptEntry.ToolCalls(id, parsed));
                    } else {
                        out.add(response(entry, id, p));
                    }
                }
                case "tool" -> {
                    String toolName = requiredString(entry, "toolName", p);
                    String callId = requiredString(entry, "toolCallID", p);
                    out.add(new TranscriptEntry.ToolOutput(
                            id, firstContentId(entry), toolName, callId, String.join("\n", texts(entry, p, false))));
                }
                default ->
                    throw bad(p + ".role", "must be 'instructions', 'user', 'response' or 'tool', not '" + role + "'");
            }
        }
        return new Restored(hasInstructions, instructions, tools, instructionsId, out);
    }

    private static void checkHeader(JsonNode node, String at) {
        JsonNode version = node.get("version");
        if (version != null && !version.isNull()) {
            String v = version.isTextual() ? version.textValue() : version.isNumber() ? version.asText() : "?";
            if (!v.equals("1") && !v.equals("1.1") && !v.equals("1.0")) {
                throw bad(at + ".version", "must be \"1\" or \"1.1\", not " + Json.write(version));
            }
        }
        JsonNode type = node.get("type");
        if (type != null
                && !type.isNull()
                && !(type.isTextual() && type.textValue().equals(TYPE))) {
            throw bad(at + ".type", "must be \"" + TYPE + "\"");
        }
    }

    private static TranscriptEntry.Response response(JsonNode entry, String id, String p) {
        JsonNode contents = entry.get("contents");
        if (contents == null || !contents.isArray()) {
            throw bad(p + ".contents", "must be an array of contents");
        }
        for (int k = 0; k < contents.size(); k++) {
            JsonNode content = contents.get(k);
            if ("structure".equals(content.path("type").asText())) {
                JsonNode structure = content.get("structure");
                if (structure == null || !structure.has("content")) {
                    throw bad(p + ".contents[" + k + "].structure.content", "is missing");
                }
                JsonNode value = structure.get("content");
                String contentId =
                        content.path("id").isTextual() ? content.get("id").textValue() : TranscriptEntry.newId();
                return new TranscriptEntry.Response(
                        id,
                        contentId,
                        Json.write(value),
                        value,
                        structure.path("source").asText("Response"));
            }
        }
        return new TranscriptEntry.Response(
                id, firstContentId(entry), String.join("\n", texts(entry, p, false)), null, null);
    }

    private static ToolCall call(JsonNode node, String p) {
        if (!node.isObject()) {
            throw bad(p, "must be a tool call object");
        }
        String id = optionalString(node, "id", p);
        String name = requiredString(node, "name", p);
        JsonNode arguments = node.get("arguments");
        ObjectNode args;
        if (arguments == null || arguments.isNull()) {
            args = Json.object();
        } else if (arguments.isObject()) {
            args = (ObjectNode) arguments;
        } else if (arguments.isTextual()) {
            try {
                JsonNode parsed = Json.parse(arguments.textValue().isBlank() ? "{}" : arguments.textValue());
                if (!parsed.isObject()) {
                    throw bad(p + ".arguments", "must be a JSON object (as a string)");
                }
                args = (ObjectNode) parsed;
            } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
                throw bad(p + ".arguments", "is not valid JSON");
            }
        } else {
            throw bad(p + ".arguments", "must be a JSON object (as a string)");
        }
        return new ToolCall(id != null ? id : ToolCall.newId(), name, args);
    }

    private static List<String> texts(JsonNode entry, String p, boolean optional) {
        JsonNode contents = entry.get("contents");
        List<String> texts = new ArrayList<>();
        if (contents == null || contents.isNull()) {
            if (optional) {
                return texts;
            }
            throw bad(p + ".contents", "must be an array of contents");
        }
        if (!contents.isArray()) {
            throw bad(p + ".contents", "must be an array of contents");
        }
        for (int k = 0; k < contents.size(); k++) {
            JsonNode content = contents.get(k);
            String cp = p + ".contents[" + k + "]";
            if (!content.isObject()) {
                throw bad(cp, "must be an object");
            }
            String type = content.path("type").asText("text");
            if (type.equals("text")) {
                texts.add(requiredString(content, "text", cp));
            } else if (type.equals("structure")) {
                if (!content.path("structure").has("content")) {
                    throw bad(cp + ".structure.content", "is missing");
                }
                texts.add(Json.write(content.path("structure").path("content")));
            } else {
                throw bad(
                        cp + ".type",
                        "must be 'text' or 'structure' (this bridge cannot restore '" + type + "' contents)");
            }
        }
        return texts;
    }

    private static String firstContentId(JsonNode entry) {
        JsonNode first = entry.path("contents").path(0).path("id");
        return first.isTextual() ? first.textValue() : TranscriptEntry.newId();
    }

    private static String requiredString(JsonNode node, String field, String p) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            throw new IllegalArgumentException("Missing required parameter '" + p + "." + field + "'.");
        }
        if (!value.isTextual()) {
            throw bad(p + "." + field, "must be a string");
        }
        return value.textValue();
    }

    private static @Nullable String optionalString(JsonNode node, String field, String p) {
        JsonNode value = node.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isTextual()) {
            throw bad(p + "." + field, "must be a string");
        }
        return value.textValue();
    }

    private static IllegalArgumentException bad(String path, String message) {
        return new IllegalArgumentException("Parameter '" + path + "' " + message + ".");
    }
}
