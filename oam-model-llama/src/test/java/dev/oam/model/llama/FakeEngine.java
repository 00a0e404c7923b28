package dev.oam.model.llama;

import dev.oam.core.model.AgentException;
import dev.oam.core.model.CancellationToken;
import dev.oam.model.llama.engine.Engine;
import dev.oam.model.llama.engine.EngineRequest;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.prompt.ChatMessage;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A pure-Java engine: ChatML rendering, control tokens {@code <|im_start|>} and {@code <|im_end|>}, one token per four
 * characters, scripted outputs streamed in scripted chunks, and every request recorded.
 */
public final class FakeEngine implements Engine {
    static final Set<String> CONTROL = Set.of("<|im_start|>", "<|im_end|>");

    record Call(EngineRequest request, Object sessionKey) {}

    private final Deque<List<String>> outputs = new ArrayDeque<>();
    final List<Call> calls = new ArrayList<>();
    int cachedTokens;

    /** The next generation streams these chunks. */
    FakeEngine then(String... chunks) {
        outputs.add(List.of(chunks));
        return this;
    }

    @Override
    public String name() {
        return "fake";
    }

    @Override
    public int contextSize() {
        return 4096;
    }

    @Override
    public int countTokens(String text) {
        return (text.length() + 3) / 4;
    }

    @Override
    public String renderChat(List<ChatMessage> messages) {
        StringBuilder out = new StringBuilder();
        for (ChatMessage message : messages) {
            out.append("<|im_start|>")
                    .append(message.role())
                    .append('\n')
                    .append(message.content())
                    .append("<|im_end|>\n");
        }
        return out.append("<|im_start|>assistant\n").toString();
    }

    @Override
    public Set<String> controlTokens() {
        return CONTROL;
    }

    @Override
    public synchronized EngineResult generate(
            EngineRequest request, Object sessionKey, Consumer<String> onDelta, CancellationToken token)
            throws AgentException {
        calls.add(new Call(request, sessionKey));
        token.check();
        List<String> chunks = outputs.isEmpty() ? List.of("(nothing scripted)") : outputs.poll();
        StringBuilder text = new StringBuilder();
        for (String chunk : chunks) {
            token.check();
            onDelta.accept(chunk);
            text.append(chunk);
        }
        return new EngineResult(
                text.toString(), countTokens(request.prompt()), cachedTokens, countTokens(text.toString()));
    }

    EngineRequest last() {
        return calls.get(calls.size() - 1).request();
    }
}
