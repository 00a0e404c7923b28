package dev.oam.model.llama;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.Log;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.jspecify.annotations.Nullable;

/**
 * Renders chat prompts in the model's own chat template without ever passing message contents through the
 * template engine (the binding garbles characters outside the BMP, and a template would interpret content).
 *
 * <p>How: the template renders, once per model, conversations whose contents are unique ASCII sentinels; the
 * rendering must hold each sentinel exactly once and in order, and the text between them is kept as the
 * <em>frame</em>. Rendering a real conversation is then frame pieces and verbatim contents, joined in Java.
 *
 * <p>Which conversations the template sees: a Jinja template that raises an error while rendering aborts the
 * JVM inside the binding (an uncaught C++ exception; measured), and real templates raise on role orders they
 * dislike ("roles must alternate", "tool role not supported"). So the template is only ever asked two shapes:
 * system, user, assistant, user (what llama.cpp itself renders when it loads the model; a template that fails
 * it is replaced by ChatML there and then) and user, assistant, user. The first gives the pieces before the
 * system text, between system and first user, user to assistant, assistant to user and after the last user
 * (with the generation prompt); the second the piece before a first user turn when there is no system text.
 * Longer conversations repeat the user/assistant pieces. Conversations are normalised into
 * {@code system? user (assistant user)*} first: a {@code tool} message becomes a user turn, consecutive turns of
 * the same role are joined with a blank line, and a later system message counts as a user turn.
 *
 * <p>Fallbacks: a template that drops the system text (it has no system role) gets the system text merged into
 * the first user message, in the second shape. A file without a template gets the frames of the {@link TurnFormat}
 * its vocabulary fits ({@link #known}). ChatML written here ({@code <|im_start|>role\ncontent<|im_end|>\n}
 * per message, then {@code <|im_start|>assistant\n}, every role kept as it is, {@code tool} included) is used for
 * {@link TurnFormat#CHATML}, when the template is ChatML itself, when a conversation cannot be normalised (it
 * starts or ends with an assistant turn), and when the template's probes fail.
 */
final class ChatRenderer {
    /** Applies the model's template to {@code {"messages": [...], "add_generation_prompt": true}}. */
    @FunctionalInterface
    interface Template {
        String apply(String requestJson) throws Exception;
    }

    static final Set<String> ROLES = Set.of("system", "user", "assistant", "tool");
    private static final List<String> WITH_SYSTEM = List.of("system", "user", "assistant", "user");
    private static final List<String> WITHOUT_SYSTEM = List.of("user", "assistant", "user");

    /** The frame of the model's template, from the two probes (null pieces: that probe failed). */
    record Frames(@Nullable List<String> withSystem, @Nullable List<String> withoutSystem, boolean chatMl) {}

    private final @Nullable Template template;
    private final String sentinelStem;
    private volatile @Nullable Frames frames;

    /** @param template the file's own template; {@code null} writes ChatML */
    ChatRenderer(@Nullable Template template) {
        this.template = template;
        this.sentinelStem = "OAMSENTINEL" + Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L << 60) + "N";
    }

    private ChatRenderer(Frames known) {
        this.template = null;
        this.sentinelStem = "";
        this.frames = known;
    }

    /** Renders in a format the bridge knows, for a file without its own template. */
    static ChatRenderer known(TurnFormat format) {
        Frames f = format.frames();
        return f == null ? new ChatRenderer((Template) null) : new ChatRenderer(f);
    }

    String render(List<ChatMessage> messages) {
        for (ChatMessage m : messages) {
            if (!ROLES.contains(m.role())) {
                throw new IllegalArgumentException("unknown chat role '" + m.role() + "' (system, user, assistant, tool)");
            }
        }
        if (template == null && frames == null) {
            return chatMl(messages);
        }
        Frames f = frames();
        List<ChatMessage> normal = normalise(messages);
        if (f.chatMl() || normal == null) {
            return chatMl(messages);
        }
        boolean hasSystem = normal.get(0).role().equals("system");
        if (hasSystem && f.withSystem() != null) {
            List<String> p = f.withSystem();
            StringBuilder out = new StringBuilder(p.get(0)).append(normal.get(0).content()).append(p.get(1));
            appendTurns(out, normal.subList(1, normal.size()), p.get(2), p.get(3), p.get(4));
            return out.toString();
        }
        if (f.withoutSystem() != null) {
            List<String> q = f.withoutSystem();
            List<ChatMessage> turns = new ArrayList<>(normal.subList(hasSystem ? 1 : 0, normal.size()));
            if (hasSystem) {
                turns.set(0, new ChatMessage("user", normal.get(0).content() + "\n\n" + turns.get(0).content()));
            }
            StringBuilder out = new StringBuilder(q.get(0));
            appendTurns(out, turns, q.get(1), q.get(2), q.get(3));
            return out.toString();
        }
        return chatMl(messages);
    }

    /** {@code turns} is user (assistant user)*; appends them with the pieces between and after. */
    private static void appendTurns(StringBuilder out, List<ChatMessage> turns, String userToAssistant,
            String assistantToUser, String end) {
        out.append(turns.get(0).content());
        for (int i = 1; i + 1 < turns.size(); i += 2) {
            out.append(userToAssistant).append(turns.get(i).content()).append(assistantToUser)
                    .append(turns.get(i + 1).content());
        }
        out.append(end);
    }

    /** True when the model's template is used for a conversation of this shape (tests). */
    boolean usesTemplate() {
        Frames f = template == null && frames == null ? null : frames();
        return f != null && !f.chatMl() && (f.withSystem() != null || f.withoutSystem() != null);
    }

    private Frames frames() {
        Frames f = frames;
        if (f == null) {
            synchronized (this) {
                f = frames;
                if (f == null) {
                    f = probeFrames();
                    frames = f;
                }
            }
        }
        return f;
    }

    private Frames probeFrames() {
        List<String> withSystem = probeShape(WITH_SYSTEM);
        List<String> chatMlPieces = List.of("<|im_start|>system\n", "<|im_end|>\n<|im_start|>user\n",
                "<|im_end|>\n<|im_start|>assistant\n", "<|im_end|>\n<|im_start|>user\n",
                "<|im_end|>\n<|im_start|>assistant\n");
        if (chatMlPieces.equals(withSystem)) {
            return new Frames(withSystem, null, true);
        }
        List<String> withoutSystem = probeShape(WITHOUT_SYSTEM);
        if (withSystem == null) {
            Log.debug("chat template drops or rejects the system role: system text goes into the first user message");
        }
        if (withSystem == null && withoutSystem == null) {
            Log.warning("the model's chat template cannot be used as is: prompts are written in ChatML");
        }
        return new Frames(withSystem, withoutSystem, false);
    }

    /**
     * The conversation in the order every template accepts, {@code system? user (assistant user)*}, with the
     * same contents; null when it cannot be put in that order.
     */
    static @Nullable List<ChatMessage> normalise(List<ChatMessage> messages) {
        List<ChatMessage> out = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            String role = switch (m.role()) {
                case "system" -> i == 0 ? "system" : "user";
                case "tool" -> "user";
                default -> m.role();
            };
            ChatMessage last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last.role().equals(role)) {
                out.set(out.size() - 1, new ChatMessage(role, last.content() + "\n\n" + m.content()));
            } else {
                out.add(new ChatMessage(role, m.content()));
            }
        }
        int first = !out.isEmpty() && out.get(0).role().equals("system") ? 1 : 0;
        if (out.size() == first || !out.get(first).role().equals("user") || !out.get(out.size() - 1).role().equals("user")) {
            return null;
        }
        return out;
    }

    static String chatMl(List<ChatMessage> messages) {
        StringBuilder out = new StringBuilder();
        for (ChatMessage m : messages) {
            out.append("<|im_start|>").append(m.role()).append('\n').append(m.content()).append("<|im_end|>\n");
        }
        return out.append("<|im_start|>assistant\n").toString();
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
        for (String piece : pieces) {
            if (piece.contains(sentinelStem)) {
                return null; // a template that repeats a message: the frame would not be faithful
            }
        }
        return List.copyOf(pieces);
    }
}
