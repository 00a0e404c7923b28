package dev.oam.game.testing;

import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolChannel;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.tool.ToolReply;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Tool definitions and a channel that answers every call at once with a fixed text, recording the calls. */
public final class Tools implements ToolChannel {
    private final String output;
    private final List<ToolCall> calls = new ArrayList<>(); // guarded by this

    private Tools(String output) {
        this.output = output;
    }

    public static Tools answering(String output) {
        return new Tools(output);
    }

    public static ToolDefinition tool(String name) {
        ObjectNode parameters = Json.object();
        parameters.put("type", "object");
        parameters.putObject("properties");
        return new ToolDefinition(name, "Looks something up.", parameters, null);
    }

    @Override
    public synchronized PendingCall send(ToolCall call) {
        calls.add(call);
        return new PendingCall() {
            @Override
            public CompletableFuture<ToolReply> reply() {
                return CompletableFuture.completedFuture(ToolReply.output(TextNode.valueOf(output)));
            }

            @Override
            public void abandon(String reason) {}
        };
    }

    public synchronized List<ToolCall> calls() {
        return List.copyOf(calls);
    }
}
