package dev.oam.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.bridge.spi.Coding;
import dev.oam.core.agent.Step;
import dev.oam.core.json.Json;
import dev.oam.core.model.ToolCallingMode;
import dev.oam.core.model.Usage;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolRecord;
import dev.oam.core.transcript.TranscriptCodec;
import dev.oam.core.transcript.TranscriptEntry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * A saved conversation ({@code --save-transcript}, {@code --resume}, and the file of a turn waiting for tool outputs):
 * {@code {"transcript": <FoundationModels transcript>, "modelName", "oam": {"version": 1, "tools": [...], "pending"?:
 * {...}}}}. {@code oam.tools} keeps the definitions with their {@code x-oam} blocks (the transcript's instructions
 * entry has them without); {@code oam.pending} is the turn that stopped for external tool outputs.
 */
record SavedConversation(
        String instructionsEntryId,
        @Nullable String instructions,
        ArrayNode rawTools,
        List<TranscriptEntry> entries,
        @Nullable Pending pending) {
    static final int VERSION = 1;

    SavedConversation {
        entries = List.copyOf(entries);
    }

    /**
     * A turn waiting for the outputs of {@code calls}. The last entries of the transcript are that turn so far: its
     * prompt, its tool rounds and the outputs of this round's command tools.
     */
    record Pending(
            List<ToolCall> calls,
            int roundsUsed,
            int callsUsed,
            int maxToolRounds,
            int maxToolCalls,
            List<ToolRecord> records,
            Usage usage,
            List<Step> steps) {
        Pending {
            calls = List.copyOf(calls);
            records = List.copyOf(records);
            steps = List.copyOf(steps);
        }
    }

    void save(Path file, List<ToolDefinition> tools, String modelName) throws CliError {
        ObjectNode root = Json.object();
        root.set("transcript", TranscriptCodec.write(instructionsEntryId, instructions, tools, entries));
        root.put("modelName", modelName);
        ObjectNode oam = root.putObject("oam");
        oam.put("version", VERSION);
        oam.set("tools", rawTools);
        if (pending != null) {
            ObjectNode p = oam.putObject("pending");
            ArrayNode calls = p.putArray("calls");
            pending.calls().forEach(call -> calls.add(Coding.call(call)));
            p.put("roundsUsed", pending.roundsUsed());
            p.put("callsUsed", pending.callsUsed());
            p.put("maxToolRounds", pending.maxToolRounds());
            p.put("maxToolCalls", pending.maxToolCalls());
            p.set("toolCalls", Coding.records(pending.records()));
            p.set("usage", Coding.usage(pending.usage()));
            ArrayNode steps = p.putArray("steps");
            pending.steps().forEach(step -> steps.add(Coding.step(step)));
        }
        try {
            Path target = file.toAbsolutePath();
            Path dir = target.getParent();
            Files.createDirectories(dir);
            Path temp = Files.createTempFile(dir, ".oam-", ".json.tmp");
            Files.writeString(temp, Out.pretty(root) + "\n");
            Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw CliError.io("cannot save the transcript to " + file + ": " + e.getMessage());
        }
    }

    static SavedConversation load(Path file) throws CliError {
        JsonNode root;
        try {
            root = Json.parse(Files.readString(file));
        } catch (IOException e) {
            throw CliError.io("cannot read the transcript " + file + ": " + e.getMessage());
        }
        try {
            JsonNode transcript = root.has("transcript") && root.has("oam") ? root.get("transcript") : root;
            TranscriptCodec.Restored restored = TranscriptCodec.read(transcript, "transcript");
            JsonNode oam = root.path("oam");
            ArrayNode rawTools = oam.path("tools").isArray()
                    ? (ArrayNode) oam.get("tools")
                    : restored.tools() != null ? restored.tools() : Json.array();
            Pending pending = null;
            JsonNode p = oam.get("pending");
            if (p != null && p.isObject()) {
                List<ToolCall> calls = new ArrayList<>();
                for (JsonNode c : p.path("calls")) {
                    calls.add(call(c));
                }
                List<ToolRecord> records = new ArrayList<>();
                for (JsonNode r : p.path("toolCalls")) {
                    records.add(new ToolRecord(
                            call(r.get("call")),
                            r.get("output"),
                            r.path("isError").asBoolean(),
                            r.path("durationSeconds").asDouble()));
                }
                List<Step> steps = new ArrayList<>();
                for (JsonNode s : p.path("steps")) {
                    List<String> enabled = new ArrayList<>();
                    s.path("enabledTools").forEach(t -> enabled.add(t.asText()));
                    steps.add(new Step(
                            s.path("index").asInt(),
                            s.path("completedToolRounds").asInt(),
                            mode(s.path("toolCallingMode").asText()),
                            enabled,
                            s.path("trimmedEntries").asInt()));
                }
                JsonNode u = p.path("usage");
                Usage usage = new Usage(
                        u.path("inputTokens").asInt(),
                        u.path("cachedInputTokens").asInt(),
                        u.path("outputTokens").asInt());
                pending = new Pending(
                        calls,
                        p.path("roundsUsed").asInt(),
                        p.path("callsUsed").asInt(),
                        p.path("maxToolRounds").asInt(4),
                        p.path("maxToolCalls").asInt(12),
                        records,
                        usage,
                        steps);
                if (calls.isEmpty()) {
                    pending = null;
                }
            }
            return new SavedConversation(
                    restored.instructionsEntryId(), restored.instructions(), rawTools, restored.entries(), pending);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw CliError.invalidInput(file + ": not a transcript saved by oam: " + e.getMessage());
        }
    }

    private static ToolCall call(JsonNode c) {
        JsonNode args = c.get("arguments");
        ObjectNode arguments;
        if (args != null && args.isObject()) {
            arguments = (ObjectNode) args;
        } else {
            arguments = Json.object();
        }
        return new ToolCall(c.get("id").asText(), c.get("name").asText(), arguments);
    }

    private static ToolCallingMode mode(String wire) {
        for (ToolCallingMode mode : ToolCallingMode.values()) {
            if (mode.wireName().equals(wire)) {
                return mode;
            }
        }
        return ToolCallingMode.ALLOWED;
    }

    /** Index of the pending turn's prompt in {@link #entries}: the last prompt. */
    int pendingTurnStart() {
        for (int i = entries.size() - 1; i >= 0; i--) {
            if (entries.get(i) instanceof TranscriptEntry.Prompt) {
                return i;
            }
        }
        throw new IllegalStateException("a pending turn has a prompt");
    }
}
