package dev.oam.game.npc;

import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Everything an NPC is, as a value: what {@code npc/state} saves and {@code npc/restore} reads back, minus the ids (the
 * NPC's and its world's, which belong to whoever holds the NPC).
 *
 * @param tools the client tools (world and memory tools follow from the options)
 * @param transcript the conversation kept verbatim (older turns live in {@code memory.summary()})
 * @param instructionsEntryId the id of the transcript's instructions entry when it is written out; {@code null} makes a
 *     new one (a restored NPC gets a new one, as {@code npc/restore} does)
 */
public record NpcState(
        Persona persona,
        NpcOptions options,
        Memory memory,
        List<ToolDefinition> tools,
        List<TranscriptEntry> transcript,
        @Nullable String instructionsEntryId) {
    public NpcState {
        Objects.requireNonNull(persona, "persona");
        Objects.requireNonNull(options, "options");
        Objects.requireNonNull(memory, "memory");
        tools = List.copyOf(tools);
        transcript = List.copyOf(transcript);
    }
}
