package dev.oam.core.agent;

import dev.oam.core.model.ToolCallingMode;
import java.util.List;

/** One model inference step of a turn ({@code steps[]} and the {@code modelStep} event). */
public record Step(
        int index, int completedToolRounds, ToolCallingMode mode, List<String> enabledTools, int trimmedEntries) {
    public Step {
        enabledTools = List.copyOf(enabledTools);
    }
}
