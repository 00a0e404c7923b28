package dev.oam.model.llama.prompt;

import dev.oam.core.Log;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Renders chat prompts, the same way for every engine.
 *
 * <p>A file with a chat template: the real messages go through the file's own Jinja template, rendered in Java
 * ({@link ChatTemplate}, HubSpot's Jinjava) as llama.cpp's server renders it with {@code --jinja}; message contents are
 * data the template never interprets. Before that the conversation is fitted to what the template accepts, learnt once
 * by rendering probe conversations whose contents are sentinels: a {@code tool} message becomes a {@code user} turn
 * unless the template renders the tool role, a system message after the first counts as a user turn, consecutive turns
 * of one role are joined with a blank line, and when the template has no system role (it raises on one or drops its
 * text) the system text opens the first user message, joined by a newline as llama.cpp joins it. A template that cannot
 * render a conversation (parse error, {@code raise_exception}, an unknown function or method) never crashes anything:
 * that prompt is written in ChatML and a warning names the reason, once per reason ({@link #problem()} gives the reason
 * for a plain conversation up front, for {@code session/create}).
 *
 * <p>A file without a template gets the frames of the {@link TurnFormat} its vocabulary fits ({@link #known}): the text
 * around each content, joined in Java, for {@code system? user (assistant user)*}. ChatML written here
 * ({@code <|im_start|>role\ncontent<|im_end|>\n} per message, then {@code <|im_start|>assistant\n}, every role kept as
 * it is, {@code tool} included) is used for {@link TurnFormat#CHATML}, when a conversation cannot be put in that order
 * for a turn format, and as the fallback of a template that fails.
 */
public final class ChatRenderer {
    static final Set<String> ROLES = Set.of("system", "user", "assistant", "tool");
    private static final String SENTINEL = "OAMSENTINEL7c1fe0d2";

    /** The frame of a known turn format (null pieces: that shape has none). */
    record Frames(
            @Nullable List<String> withSystem, @Nullable List<String> withoutSystem, boolean chatMl) {}

    /** What the template accepts, from the probes. */
    private record Roles(boolean system, boolean tool) {}

    private final @Nullable ChatTemplate template;
    private final @Nullable Frames frames;
    private volatile @Nullable Roles roles;
    private final Set<String> warned = ConcurrentHashMap.newKeySet();

    /** @param template the file's own template; {@code null} writes ChatML */
    ChatRenderer(@Nullable ChatTemplate template) {
        this.template = template;
        this.frames = null;
    }

    private ChatRenderer(Frames known) {
        this.template = null;
        this.frames = known;
    }

    /** Renders in a file's own Jinja template {@code source}, with the vocabulary's BOS and EOS texts. */
    public static ChatRenderer ofTemplate(String source, String bosToken, String eosToken, boolean addBos) {
        return new ChatRenderer(new ChatTemplate(source, bosToken, eosToken, addBos));
    }

    /** Renders in a format the bridge knows, for a file without its own template. */
    public static ChatRenderer known(TurnFormat format) {
        Frames f = format.frames();
        return f == null ? new ChatRenderer((ChatTemplate) null) : new ChatRenderer(f);
    }

    public String render(List<ChatMessage> messages) {
        for (ChatMessage m : messages) {
            if (!ROLES.contains(m.role())) {
                throw new IllegalArgumentException(
                        "unknown chat role '" + m.role() + "' (system, user, assistant, tool)");
            }
        }
        ChatTemplate t = template;
        if (t != null) {
            try {
                return t.render(fit(messages, roles(t)));
            } catch (ChatTemplate.TemplateException e) {
                if (!messages.isEmpty() && warned.add(e.getMessage())) {
                    Log.warning(e.getMessage() + "; this prompt is written in ChatML instead");
                }
                return chatMl(messages);
            }
        }
        Frames f = frames;
        if (f == null) {
            return chatMl(messages);
        }
        List<ChatMessage> normal = normalise(messages);
        if (f.chatMl() || normal == null) {
            return chatMl(messages);
        }
        boolean hasSystem = normal.get(0).role().equals("system");
        if (hasSystem && f.withSystem() != null) {
            List<String> p = f.withSystem();
            StringBuilder out =
                    new StringBuilder(p.get(0)).append(normal.get(0).content()).append(p.get(1));
            appendTurns(out, normal.subList(1, normal.size()), p.get(2), p.get(3), p.get(4));
            return out.toString();
        }
        if (f.withoutSystem() != null) {
            List<String> q = f.withoutSystem();
            List<ChatMessage> turns = new ArrayList<>(normal.subList(hasSystem ? 1 : 0, normal.size()));
            if (hasSystem) {
                turns.set(
                        0,
                        new ChatMessage(
                                "user",
                                normal.get(0).content() + "\n\n" + turns.get(0).content()));
            }
            StringBuilder out = new StringBuilder(q.get(0));
            appendTurns(out, turns, q.get(1), q.get(2), q.get(3));
            return out.toString();
        }
        return chatMl(messages);
    }

    /**
     * Why the file's template cannot render a plain conversation (system, user, assistant, user), or {@code null} when
     * it can or the file has none.
     */
    @Nullable
    public String problem() {
        ChatTemplate t = template;
        if (t == null) {
            return null;
        }
        List<ChatMessage> plain = List.of(
                new ChatMessage("system", "You are a guard."),
                new ChatMessage("user", "Hello."),
                new ChatMessage("assistant", "Halt."),
                new ChatMessage("user", "May I pass?"));
        try {
            t.render(fit(plain, roles(t)));
            return null;
        } catch (ChatTemplate.TemplateException e) {
            return e.getMessage();
        }
    }

    /** The reasons of the template failures seen so far, each once (tests). */
    Set<String> failures() {
        return Set.copyOf(warned);
    }

    /** True when prompts are written in the file's template or a known turn format's frames, not ChatML (tests). */
    boolean usesTemplate() {
        Frames f = frames;
        return template != null ? problem() == null : f != null && !f.chatMl();
    }

    private Roles roles(ChatTemplate t) {
        Roles r = roles;
        if (r == null) {
            r = new Roles(
                    renders(t, List.of(new ChatMessage("system", SENTINEL), new ChatMessage("user", "Hello."))),
                    renders(
                            t,
                            List.of(
                                    new ChatMessage("user", "Hello."),
                                    new ChatMessage("assistant", "Halt."),
                                    new ChatMessage("tool", SENTINEL))));
            roles = r;
        }
        return r;
    }

    private static boolean renders(ChatTemplate t, List<ChatMessage> probe) {
        try {
            return t.render(probe).contains(SENTINEL);
        } catch (ChatTemplate.TemplateException e) {
            return false;
        }
    }

    /** The conversation in the roles the template accepts, with the same contents. */
    private static List<ChatMessage> fit(List<ChatMessage> messages, Roles roles) {
        List<ChatMessage> out = merged(messages, roles.tool());
        if (!roles.system() && !out.isEmpty() && out.get(0).role().equals("system")) {
            ChatMessage system = out.remove(0);
            if (!out.isEmpty() && out.get(0).role().equals("user")) {
                out.set(
                        0,
                        new ChatMessage(
                                "user", system.content() + "\n" + out.get(0).content()));
            } else {
                out.add(0, new ChatMessage("user", system.content()));
            }
        }
        return out;
    }

    /**
     * {@code messages} with a later system message as a user turn, a tool message as a user turn unless
     * {@code keepTool}, and consecutive turns of one role joined with a blank line.
     */
    private static List<ChatMessage> merged(List<ChatMessage> messages, boolean keepTool) {
        List<ChatMessage> out = new ArrayList<>();
        for (int i = 0; i < messages.size(); i++) {
            ChatMessage m = messages.get(i);
            String role = switch (m.role()) {
                case "system" -> i == 0 ? "system" : "user";
                case "tool" -> keepTool ? "tool" : "user";
                default -> m.role();
            };
            ChatMessage last = out.isEmpty() ? null : out.get(out.size() - 1);
            if (last != null && last.role().equals(role)) {
                out.set(out.size() - 1, new ChatMessage(role, last.content() + "\n\n" + m.content()));
            } else {
                out.add(new ChatMessage(role, m.content()));
            }
        }
        return out;
    }

    /** {@code turns} is user (assistant user)*; appends them with the pieces between and after. */
    private static void appendTurns(
            StringBuilder out, List<ChatMessage> turns, String userToAssistant, String assistantToUser, String end) {
        out.append(turns.get(0).content());
        for (int i = 1; i + 1 < turns.size(); i += 2) {
            out.append(userToAssistant)
                    .append(turns.get(i).content())
                    .append(assistantToUser)
                    .append(turns.get(i + 1).content());
        }
        out.append(end);
    }

    /**
     * The conversation in the order every template accepts, {@code system? user (assistant user)*}, with the same
     * contents; null when it cannot be put in that order.
     */
    static @Nullable List<ChatMessage> normalise(List<ChatMessage> messages) {
        List<ChatMessage> out = merged(messages, false);
        int first = !out.isEmpty() && out.get(0).role().equals("system") ? 1 : 0;
        if (out.size() == first
                || !out.get(first).role().equals("user")
                || !out.get(out.size() - 1).role().equals("user")) {
            return null;
        }
        return out;
    }

    public static String chatMl(List<ChatMessage> messages) {
        StringBuilder out = new StringBuilder();
        for (ChatMessage m : messages) {
            out.append("<|im_start|>")
                    .append(m.role())
                    .append('\n')
                    .append(m.content())
                    .append("<|im_end|>\n");
        }
        return out.append("<|im_start|>assistant\n").toString();
    }
}
