package dev.oam.model.llama;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * Renders chat prompts in the model's own chat template without ever passing message contents through the
 * template engine (the binding garbles characters outside the BMP, and a template would interpret content).
 *
 * <p>How: for a sequence of roles it asks the template once to render messages whose contents are unique ASCII
 * sentinels, checks that the rendering holds each sentinel exactly once and in order, and keeps the text between
 * them as the <em>frame</em> of that role sequence (cached, bounded, least recently used out). Rendering is then
 * frame piece, content, frame piece, …, in Java. A frame per whole role sequence (rather than per role) keeps
 * whatever a template does with positions: a system prompt folded into the first turn, a BOS text before the
 * first message only, a different last turn.
 *
 * <p>Fallbacks: when the template rejects the sequence (it throws, or drops or duplicates a sentinel) and the
 * sequence starts with a system message, the system text is merged into the first user message (some templates
 * have no system role) and that shape is probed. When that fails too, when a role is rejected ({@code tool} by
 * most non-ChatML templates), or when the file has no template at all, the prompt is ChatML written here:
 * {@code <|im_start|>role\ncontent<|im_end|>\n} per message, then {@code <|im_start|>assistant\n}.
 */
final class ChatRenderer {
    /** Applies the model's template to {@code {"messages": [...]}}, ending with the generation prompt. */
    @FunctionalInterface
    interface Template {
        String apply(String requestJson) throws Exception;
    }

    static final Set<String> ROLES = Set.of("system", "user", "assistant", "tool");
    private static final int MAX_FRAMES = 256;

    /** How one role sequence is rendered: the pieces around the contents, or ChatML. */
    record Frame(List<String> pieces, boolean systemMerged) {}

    private final @Nullable Template template;
    private final String sentinelStem;
    private final Map<List<String>, Optional<Frame>> frames = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<List<String>, Optional<Frame>> eldest) {
            return size() > MAX_FRAMES;
        }
    }; // guarded by itself

    ChatRenderer(@Nullable Template template) {
        this.template = template;
        this.sentinelStem = "OAMSENTINEL" + Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L << 60) + "N";
    }

    String render(List<ChatMessage> messages) {
        List<String> roles = new ArrayList<>(messages.size());
        for (ChatMessage m : messages) {
            if (!ROLES.contains(m.role())) {
                throw new IllegalArgumentException("unknown chat role '" + m.role() + "' (system, user, assistant, tool)");
            }
            roles.add(m.role());
        }
        Optional<Frame> frame;
        synchronized (frames) {
            frame = frames.get(roles);
        }
        if (frame == null) {
            frame = probe(List.copyOf(roles));
            synchronized (frames) {
                frames.put(List.copyOf(roles), frame);
            }
        }
        return frame.map(f -> fill(f, messages)).orElseGet(() -> chatMl(messages));
    }

    /** True when {@code messages} render in the model's template, false when they fall back to ChatML (tests). */
    boolean usesTemplate(List<String> roles) {
        render(roles.stream().map(r -> new ChatMessage(r, "x")).toList());
        synchronized (frames) {
            Optional<Frame> frame = frames.get(roles);
            return frame != null && frame.isPresent();
        }
    }

    static String chatMl(List<ChatMessage> messages) {
        StringBuilder out = new StringBuilder();
        for (ChatMessage m : messages) {
            out.append("<|im_start|>").append(m.role()).append('\n').append(m.content()).append("<|im_end|>\n");
        }
        return out.append("<|im_start|>assistant\n").toString();
    }

    private static String fill(Frame frame, List<ChatMessage> messages) {
        List<String> contents = new ArrayList<>();
        int start = 0;
        if (frame.systemMerged()) {
            String system = messages.get(0).content();
            start = 1;
            boolean merged = false;
            for (int i = 1; i < messages.size(); i++) {
                String content = messages.get(i).content();
                if (!merged && messages.get(i).role().equals("user")) {
                    content = system + "\n\n" + content;
                    merged = true;
                }
                contents.add(content);
            }
        } else {
            for (int i = start; i < messages.size(); i++) {
                contents.add(messages.get(i).content());
            }
        }
        StringBuilder out = new StringBuilder(frame.pieces().get(0));
        for (int i = 0; i < contents.size(); i++) {
            out.append(contents.get(i)).append(frame.pieces().get(i + 1));
        }
        return out.toString();
    }

    private Optional<Frame> probe(List<String> roles) {
        if (template == null) {
            return Optional.empty();
        }
        List<String> pieces = probeShape(roles);
        if (pieces != null) {
            return Optional.of(new Frame(pieces, false));
        }
        if (!roles.isEmpty() && roles.get(0).equals("system") && roles.subList(1, roles.size()).contains("user")) {
            pieces = probeShape(roles.subList(1, roles.size()));
            if (pieces != null) {
                Log.debug("chat template has no system role: system text is merged into the first user message");
                return Optional.of(new Frame(pieces, true));
            }
        }
        Log.debug("chat template rejected roles " + roles + ": using ChatML");
        return Optional.empty();
    }

    /** The pieces around the contents when the template renders {@code roles} faithfully, else null. */
    private @Nullable List<String> probeShape(List<String> roles) {
        ObjectNode request = Json.object();
        ArrayNode messages = request.putArray("messages");
        List<String> sentinels = new ArrayList<>();
        for (int i = 0; i < roles.size(); i++) {
            String sentinel = sentinelStem + i + "E";
            sentinels.add(sentinel);
            messages.addObject().put("role", roles.get(i)).put("content", sentinel);
        }
        request.put("add_generation_prompt", true);
        String rendered;
        try {
            rendered = template.apply(Json.write(request));
        } catch (Exception | LinkageError e) {
            Log.debug("chat template failed for roles " + roles + ": " + e.getMessage());
            return null;
        }
        if (rendered == null) {
            return null;
        }
        List<String> pieces = new ArrayList<>();
        int from = 0;
        for (String sentinel : sentinels) {
            int at = rendered.indexOf(sentinel, from);
            if (at < 0 || rendered.indexOf(sentinel, at + 1) >= 0) {
                return null;
            }
            pieces.add(rendered.substring(from, at));
            from = at + sentinel.length();
        }
        pieces.add(rendered.substring(from));
        // Stray sentinels (a template that repeats a message) make the frame unusable.
        for (String piece : pieces) {
            if (piece.contains(sentinelStem)) {
                return null;
            }
        }
        return List.copyOf(pieces);
    }
}
