package dev.oam.core.model;

import dev.oam.core.json.Json;
import dev.oam.core.tool.ToolCall;
import dev.oam.core.tool.ToolDefinition;
import dev.oam.core.transcript.TranscriptEntry;
import java.nio.charset.StandardCharsets;

/**
 * The token estimate for models without a tokenizer (the scripted model): one token per four bytes of UTF-8, rounded
 * up, plus four tokens of framing per entry. Instructions, the context note, every visible entry and every offered
 * tool's name, description and parameters count.
 */
public final class Tokens {
    /** Framing tokens counted for each transcript entry. */
    public static final int PER_ENTRY = 4;

    private Tokens() {}

    public static int estimate(String text) {
        if (text.isEmpty()) {
            return 0;
        }
        return (text.getBytes(StandardCharsets.UTF_8).length + 3) / 4;
    }

    /** The estimated input tokens of one model step. */
    public static int estimate(ModelRequest request) {
        int total = estimate(request.instructions() == null ? "" : request.instructions())
                + estimate(request.contextNote() == null ? "" : request.contextNote());
        for (TranscriptEntry entry : request.entries()) {
            total += estimate(entry);
        }
        for (ToolDefinition tool : request.tools()) {
            total += estimate(tool.name()
                    + (tool.description() == null ? "" : tool.description())
                    + Json.write(tool.parameters()));
        }
        if (request.schema() != null) {
            total += estimate(Json.write(request.schema().json()));
        }
        return total;
    }

    public static int estimate(TranscriptEntry entry) {
        return PER_ENTRY
                + switch (entry) {
                    case TranscriptEntry.Prompt p -> estimate(p.text());
                    case TranscriptEntry.ToolCalls c -> {
                        int sum = 0;
                        for (ToolCall call : c.calls()) {
                            sum += estimate(call.name() + Json.write(call.arguments()));
                        }
                        yield sum;
                    }
                    case TranscriptEntry.ToolOutput o -> estimate(o.text());
                    case TranscriptEntry.Response r -> estimate(r.text());
                };
    }
}
