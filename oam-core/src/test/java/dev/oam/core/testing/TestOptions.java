package dev.oam.core.testing;

import dev.oam.core.agent.AgentOptions;
import dev.oam.core.agent.ToolChoice;
import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/** Builds {@link AgentOptions} from the protocol defaults, changing only what a test names. */
public final class TestOptions {
    private ToolChoice toolChoice = ToolChoice.AUTO;
    private int maxToolRounds = 4;
    private int maxToolCalls = 12;
    private @Nullable List<String> enabledTools;
    private Duration toolTimeout = AgentOptions.DEFAULT_TOOL_TIMEOUT;
    private int maxAttempts = 2;
    private boolean trimHistory = true;
    private int reservedResponseTokens = 1024;

    private TestOptions() {}

    public static TestOptions options() {
        return new TestOptions();
    }

    public TestOptions toolChoice(ToolChoice value) {
        toolChoice = value;
        return this;
    }

    public TestOptions maxToolRounds(int value) {
        maxToolRounds = value;
        return this;
    }

    public TestOptions maxToolCalls(int value) {
        maxToolCalls = value;
        return this;
    }

    public TestOptions enabledTools(String... names) {
        enabledTools = List.of(names);
        return this;
    }

    public TestOptions toolTimeout(Duration value) {
        toolTimeout = value;
        return this;
    }

    public TestOptions maxAttempts(int value) {
        maxAttempts = value;
        return this;
    }

    public TestOptions trimHistory(boolean value) {
        trimHistory = value;
        return this;
    }

    public TestOptions reservedResponseTokens(int value) {
        reservedResponseTokens = value;
        return this;
    }

    public AgentOptions build() {
        return new AgentOptions(
                toolChoice,
                maxToolRounds,
                maxToolCalls,
                enabledTools,
                null,
                null,
                null,
                toolTimeout,
                trimHistory,
                reservedResponseTokens,
                maxAttempts);
    }
}
