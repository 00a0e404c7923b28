package dev.oam.model.llama.prompt;

import com.hubspot.jinjava.Jinjava;
import com.hubspot.jinjava.JinjavaConfig;
import com.hubspot.jinjava.LegacyOverrides;
import com.hubspot.jinjava.el.JinjavaInterpreterResolver;
import com.hubspot.jinjava.interpret.JinjavaInterpreter;
import com.hubspot.jinjava.interpret.RenderResult;
import com.hubspot.jinjava.interpret.TemplateError;
import com.hubspot.jinjava.lib.filter.Filter;
import com.hubspot.jinjava.lib.fn.ELFunctionDefinition;
import dev.oam.model.llama.gguf.GgufFile;
import java.beans.FeatureDescriptor;
import java.lang.reflect.Method;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.TextStyle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import jinjava.javax.el.ELContext;
import jinjava.javax.el.ELResolver;
import org.jspecify.annotations.Nullable;

/**
 * A GGUF file's own Jinja chat template ({@code tokenizer.chat_template}), rendered in Java by HubSpot's Jinjava, the
 * same for the JNI and the FFM engine.
 *
 * <p>The template sees what llama.cpp's server gives it ({@code common/chat.cpp}, {@code --jinja}): {@code messages} (a
 * list of {@code {role, content}}), {@code add_generation_prompt: true}, {@code bos_token} and {@code eos_token} (the
 * vocabulary's BOS and EOS texts), {@code enable_thinking: true}, {@code date_string} ({@code "%d %b %Y"}) and
 * {@code datetime} ({@code "%b %d %Y"}) of today; {@code tools} is absent. Like llama.cpp, a rendering that starts with
 * the BOS text loses it when the tokenizer adds BOS itself, so the prompt never has two. Blocks are trimmed as in
 * Jinja's {@code trim_blocks} and {@code lstrip_blocks}, which llama.cpp and Hugging Face both set.
 *
 * <p>The Python-isms chat templates use and Jinjava lacks are added here, without touching the template text: the
 * functions {@code raise_exception(msg)} (the rendering fails with that message) and {@code strftime_now(fmt)} (local
 * time, the common {@code %} codes); the string methods {@code strip lstrip rstrip startswith endswith split upper
 * lower replace title capitalize} and the dict methods {@code items keys values get} through an EL resolver in front of
 * Jinjava's own ({@link PythonMethods}); {@code |tojson} is replaced by one that writes as llama.cpp and Python do
 * ({@link ToJson}). Jinjava itself has {@code namespace(...)}, {@code loop.first/last}, {@code is defined},
 * {@code |tojson}, {@code |trim} and slices such as {@code messages[1:]}.
 *
 * <p>Message contents are data: Jinjava's nested interpretation (rendering {@code {{ }}} found in a value) is off, so a
 * content holding {@code {{ x }}} or {@code {% if %}} comes out as it went in. A template Jinjava cannot parse or that
 * fails while rendering (an unknown function or method, {@code raise_exception}) throws {@link TemplateException}
 * naming the reason; it never crashes the JVM, unlike the native template engines.
 */
public final class ChatTemplate {
    /** The template cannot render a conversation; the message says why. */
    static final class TemplateException extends Exception {
        private static final long serialVersionUID = 1L;

        TemplateException(String message) {
            super(message);
        }
    }

    private static final Jinjava JINJAVA = jinjava();

    private final String source;
    private final String bosToken;
    private final String eosToken;
    private final boolean addBos;

    /**
     * @param bosToken the vocabulary's BOS text ({@code ""} when it has none)
     * @param addBos whether the tokenizer adds BOS itself (then a leading BOS text is cut from the rendering)
     */
    ChatTemplate(String source, String bosToken, String eosToken, boolean addBos) {
        this.source = source;
        this.bosToken = bosToken;
        this.eosToken = eosToken;
        this.addBos = addBos;
    }

    /** The vocabulary's BOS text, {@code ""} when the file names none. */
    public static String bosToken(GgufFile file) {
        return token(file, "tokenizer.ggml.bos_token_id");
    }

    /** The vocabulary's EOS text, {@code ""} when the file names none. */
    public static String eosToken(GgufFile file) {
        return token(file, "tokenizer.ggml.eos_token_id");
    }

    private static String token(GgufFile file, String key) {
        Object id = file.metadata().get(key);
        if (id instanceof Number n
                && n.longValue() >= 0
                && n.longValue() < file.tokens().size()) {
            return file.tokens().get(n.intValue());
        }
        return "";
    }

    String source() {
        return source;
    }

    /**
     * Renders {@code messages} as they are, with the generation prompt.
     *
     * @throws TemplateException the template does not parse or fails on this conversation
     */
    String render(List<ChatMessage> messages) throws TemplateException {
        List<Map<String, Object>> list = new ArrayList<>();
        for (ChatMessage m : messages) {
            Map<String, Object> message = new LinkedHashMap<>();
            message.put("role", m.role());
            message.put("content", m.content());
            list.add(message);
        }
        ZonedDateTime now = ZonedDateTime.now();
        Map<String, Object> context = new HashMap<>();
        context.put("messages", list);
        context.put("add_generation_prompt", true);
        context.put("bos_token", bosToken);
        context.put("eos_token", eosToken);
        context.put("enable_thinking", true);
        context.put("date_string", strftime(now, "%d %b %Y"));
        context.put("datetime", strftime(now, "%b %d %Y"));
        RenderResult result;
        try {
            result = JINJAVA.renderForResult(source, context);
        } catch (RuntimeException e) {
            throw new TemplateException("the chat template cannot be rendered: " + e.getMessage());
        }
        for (TemplateError error : result.getErrors()) {
            if (error.getSeverity() == TemplateError.ErrorType.FATAL) {
                throw new TemplateException(reason(error));
            }
        }
        String out = result.getOutput();
        if (addBos && !bosToken.isEmpty() && out.startsWith(bosToken)) {
            out = out.substring(bosToken.length());
        }
        return out;
    }

    private static String reason(TemplateError error) {
        String message = error.getMessage() == null ? error.getReason().toString() : error.getMessage();
        Throwable cause = error.getException();
        while (cause != null) {
            if (cause instanceof Raised raised) {
                return "the chat template raised an exception: " + raised.getMessage();
            }
            cause = cause.getCause();
        }
        if (message.contains(Raised.MARKER)) {
            return "the chat template raised an exception: "
                    + message.substring(message.indexOf(Raised.MARKER) + Raised.MARKER.length());
        }
        return "the chat template cannot be rendered (line " + error.getLineno() + "): " + message;
    }

    private static Jinjava jinjava() {
        JinjavaConfig config = JinjavaConfig.newBuilder()
                .withTrimBlocks(true)
                .withLstripBlocks(true)
                .withNestedInterpretationEnabled(false)
                .withLegacyOverrides(LegacyOverrides.newBuilder()
                        .withEvaluateMapKeys(true)
                        .withIterateOverMapKeys(true)
                        // not the "pyish" object mapper: it writes control characters of a content as \\u0019 text
                        .withParseWhitespaceControlStrictly(true)
                        .withAllowAdjacentTextNodes(true)
                        .withUseTrimmingForNotesAndExpressions(true)
                        .withKeepNullableLoopValues(true)
                        .withHandleBackslashInQuotesOnly(true)
                        .build())
                .withElResolver(new PythonMethods(JinjavaInterpreterResolver.DEFAULT_RESOLVER_READ_WRITE))
                .withMaxOutputSize(64L << 20)
                .build();
        Jinjava jinjava = new Jinjava(config);
        jinjava.getGlobalContext().registerFilter(new ToJson());
        function(jinjava, "raise_exception", "raiseException");
        function(jinjava, "strftime_now", "strftimeNow");
        return jinjava;
    }

    /** Registers the static one-argument method {@code method} of this class as the global {@code name}. */
    private static void function(Jinjava jinjava, String name, String method) {
        try {
            Method m = ChatTemplate.class.getDeclaredMethod(method, Object.class);
            m.setAccessible(true); // this class is package-private: Jinjava calls it reflectively
            jinjava.getGlobalContext().registerFunction(new ELFunctionDefinition("", name, m));
        } catch (NoSuchMethodException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * {@code |tojson} as llama.cpp writes it (and Python's {@code json.dumps}): {@code ", "} and {@code ": "} between
     * items and keys on one line, {@code ","} and indentation with {@code indent=N}, non-ASCII kept as it is, keys in
     * their order. Jinjava's own writes without spaces.
     */
    static final class ToJson implements Filter {
        @Override
        public String getName() {
            return "tojson";
        }

        @Override
        public Object filter(Object value, JinjavaInterpreter interpreter, String... args) {
            return write(value, -1);
        }

        @Override
        public Object filter(Object value, JinjavaInterpreter interpreter, Object[] args, Map<String, Object> kwargs) {
            Object indent = kwargs.containsKey("indent") ? kwargs.get("indent") : args.length > 0 ? args[0] : null;
            return write(value, indent instanceof Number n ? n.intValue() : -1);
        }

        static String write(@Nullable Object value, int indent) {
            StringBuilder out = new StringBuilder();
            write(out, value, indent, 0);
            return out.toString();
        }

        private static void write(StringBuilder out, @Nullable Object value, int indent, int depth) {
            if (value == null) {
                out.append("null");
            } else if (value instanceof Boolean || value instanceof Number) {
                out.append(value);
            } else if (value instanceof Map<?, ?> map) {
                open(out, '{', '}', map.isEmpty(), indent, depth, () -> {
                    boolean first = true;
                    for (Map.Entry<?, ?> e : map.entrySet()) {
                        separate(out, first, indent, depth + 1);
                        first = false;
                        string(out, String.valueOf(e.getKey()));
                        out.append(": ");
                        write(out, e.getValue(), indent, depth + 1);
                    }
                });
            } else if (value instanceof Iterable<?> list) {
                open(out, '[', ']', !list.iterator().hasNext(), indent, depth, () -> {
                    boolean first = true;
                    for (Object item : list) {
                        separate(out, first, indent, depth + 1);
                        first = false;
                        write(out, item, indent, depth + 1);
                    }
                });
            } else {
                string(out, value.toString());
            }
        }

        private static void open(
                StringBuilder out, char open, char close, boolean empty, int indent, int depth, Runnable items) {
            out.append(open);
            if (!empty) {
                items.run();
                if (indent >= 0) {
                    out.append('\n').append(" ".repeat(indent * depth));
                }
            }
            out.append(close);
        }

        private static void separate(StringBuilder out, boolean first, int indent, int depth) {
            if (!first) {
                out.append(indent >= 0 ? "," : ", ");
            }
            if (indent >= 0) {
                out.append('\n').append(" ".repeat(indent * depth));
            }
        }

        private static void string(StringBuilder out, String s) {
            out.append('"');
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                switch (c) {
                    case '"' -> out.append("\\\"");
                    case '\\' -> out.append("\\\\");
                    case '\n' -> out.append("\\n");
                    case '\r' -> out.append("\\r");
                    case '\t' -> out.append("\\t");
                    case '\b' -> out.append("\\b");
                    case '\f' -> out.append("\\f");
                    default -> {
                        if (c < 0x20) {
                            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                        } else {
                            out.append(c);
                        }
                    }
                }
            }
            out.append('"');
        }
    }

    /** What {@code raise_exception} throws; its message is the template's. */
    static final class Raised extends RuntimeException {
        private static final long serialVersionUID = 1L;
        static final String MARKER = "oam-raised: ";

        Raised(String message) {
            super(MARKER + message);
        }

        @Override
        public String getMessage() {
            String m = super.getMessage();
            return m.startsWith(MARKER) ? m.substring(MARKER.length()) : m;
        }
    }

    /** {@code raise_exception(msg)}: the template refuses the conversation. */
    static Object raiseException(Object message) {
        throw new Raised(String.valueOf(message));
    }

    /** {@code strftime_now(fmt)}: the local time now, formatted like Python's {@code strftime}. */
    static String strftimeNow(Object format) {
        return strftime(ZonedDateTime.now(), String.valueOf(format));
    }

    /** Python's {@code strftime} for the codes chat templates use; other codes are kept as written. */
    static String strftime(ZonedDateTime t, String format) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < format.length(); i++) {
            char c = format.charAt(i);
            if (c != '%' || i + 1 == format.length()) {
                out.append(c);
                continue;
            }
            char code = format.charAt(++i);
            switch (code) {
                case 'd' -> out.append(String.format(Locale.ROOT, "%02d", t.getDayOfMonth()));
                case 'e' -> out.append(String.format(Locale.ROOT, "%2d", t.getDayOfMonth()));
                case 'm' -> out.append(String.format(Locale.ROOT, "%02d", t.getMonthValue()));
                case 'Y' -> out.append(t.getYear());
                case 'y' -> out.append(String.format(Locale.ROOT, "%02d", t.getYear() % 100));
                case 'b', 'h' -> out.append(t.getMonth().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'B' -> out.append(t.getMonth().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'a' -> out.append(t.getDayOfWeek().getDisplayName(TextStyle.SHORT, Locale.ENGLISH));
                case 'A' -> out.append(t.getDayOfWeek().getDisplayName(TextStyle.FULL, Locale.ENGLISH));
                case 'H' -> out.append(String.format(Locale.ROOT, "%02d", t.getHour()));
                case 'I' -> out.append(String.format(Locale.ROOT, "%02d", (t.getHour() + 11) % 12 + 1));
                case 'M' -> out.append(String.format(Locale.ROOT, "%02d", t.getMinute()));
                case 'S' -> out.append(String.format(Locale.ROOT, "%02d", t.getSecond()));
                case 'p' -> out.append(t.getHour() < 12 ? "AM" : "PM");
                case 'j' -> out.append(String.format(Locale.ROOT, "%03d", t.getDayOfYear()));
                case 'F' -> out.append(t.format(DateTimeFormatter.ISO_LOCAL_DATE));
                case '%' -> out.append('%');
                default -> out.append('%').append(code);
            }
        }
        return out.toString();
    }

    /**
     * Python's string and dict methods for templates, in front of Jinjava's own resolver: a call on a string or a map
     * that names one of them is answered here, everything else goes to {@code delegate}.
     */
    static final class PythonMethods extends ELResolver {
        private final ELResolver delegate;

        PythonMethods(ELResolver delegate) {
            this.delegate = delegate;
        }

        @Override
        public @Nullable Object invoke(
                ELContext context, @Nullable Object base, Object method, Class<?>[] types, Object[] params) {
            if (base instanceof CharSequence text && method instanceof String name) {
                Object[] args = params == null ? new Object[0] : params;
                Object value = stringMethod(text.toString(), name, args);
                if (value != NONE) {
                    context.setPropertyResolved(true);
                    return value;
                }
            }
            if (base instanceof Map<?, ?> map && method instanceof String name) {
                Object[] args = params == null ? new Object[0] : params;
                Object value = mapMethod(map, name, args);
                if (value != NONE) {
                    context.setPropertyResolved(true);
                    return value;
                }
            }
            return delegate.invoke(context, base, method, types, params);
        }

        private static final Object NONE = new Object();

        private static Object stringMethod(String s, String name, Object[] args) {
            return switch (name) {
                case "strip" ->
                    args.length == 0 || args[0] == null
                            ? stripChars(stripChars(s, null, true), null, false)
                            : stripChars(stripChars(s, args[0].toString(), true), args[0].toString(), false);
                case "lstrip" -> stripChars(s, args.length == 0 || args[0] == null ? null : args[0].toString(), true);
                case "rstrip" -> stripChars(s, args.length == 0 || args[0] == null ? null : args[0].toString(), false);
                case "startswith" -> args.length == 1 ? anyOf(args[0], s::startsWith) : NONE;
                case "endswith" -> args.length == 1 ? anyOf(args[0], s::endsWith) : NONE;
                case "upper" -> args.length == 0 ? s.toUpperCase(Locale.ROOT) : NONE;
                case "lower" -> args.length == 0 ? s.toLowerCase(Locale.ROOT) : NONE;
                case "title" -> args.length == 0 ? title(s) : NONE;
                case "capitalize" ->
                    args.length == 0
                            ? (s.isEmpty()
                                    ? s
                                    : s.substring(0, 1).toUpperCase(Locale.ROOT)
                                            + s.substring(1).toLowerCase(Locale.ROOT))
                            : NONE;
                case "split" -> split(s, args);
                case "replace" ->
                    args.length >= 2
                            ? replace(
                                    s,
                                    String.valueOf(args[0]),
                                    String.valueOf(args[1]),
                                    args.length > 2 && args[2] instanceof Number n ? n.intValue() : -1)
                            : NONE;
                default -> NONE;
            };
        }

        private static Object mapMethod(Map<?, ?> map, String name, Object[] args) {
            return switch (name) {
                case "items" -> {
                    if (args.length != 0) {
                        yield NONE;
                    }
                    List<List<Object>> items = new ArrayList<>();
                    for (Map.Entry<?, ?> e : map.entrySet()) {
                        items.add(Arrays.asList(e.getKey(), e.getValue()));
                    }
                    yield items;
                }
                case "keys" -> args.length == 0 ? new ArrayList<>(map.keySet()) : NONE;
                case "values" -> args.length == 0 ? new ArrayList<>(map.values()) : NONE;
                case "get" ->
                    args.length == 1
                            ? map.get(args[0])
                            : args.length == 2 ? (map.containsKey(args[0]) ? map.get(args[0]) : args[1]) : NONE;
                default -> NONE;
            };
        }

        private static boolean anyOf(Object prefixes, java.util.function.Predicate<String> test) {
            if (prefixes instanceof Iterable<?> many) {
                for (Object p : many) {
                    if (test.test(String.valueOf(p))) {
                        return true;
                    }
                }
                return false;
            }
            return test.test(String.valueOf(prefixes));
        }

        /** Python's strip family: {@code chars} null strips whitespace. */
        private static String stripChars(String s, @Nullable String chars, boolean left) {
            int from = 0;
            int to = s.length();
            if (left) {
                while (from < to && strippable(s.charAt(from), chars)) {
                    from++;
                }
            } else {
                while (to > from && strippable(s.charAt(to - 1), chars)) {
                    to--;
                }
            }
            return s.substring(from, to);
        }

        private static boolean strippable(char c, @Nullable String chars) {
            return chars == null ? Character.isWhitespace(c) || Character.isSpaceChar(c) : chars.indexOf(c) >= 0;
        }

        private static List<String> split(String s, Object[] args) {
            String sep = args.length == 0 || args[0] == null ? null : args[0].toString();
            int max = args.length > 1 && args[1] instanceof Number n ? n.intValue() : -1;
            List<String> parts = new ArrayList<>();
            if (sep == null) {
                String rest = stripChars(s, null, true);
                while (!rest.isEmpty()) {
                    if (max >= 0 && parts.size() == max) {
                        parts.add(rest);
                        return parts;
                    }
                    int end = 0;
                    while (end < rest.length() && !strippable(rest.charAt(end), null)) {
                        end++;
                    }
                    parts.add(rest.substring(0, end));
                    rest = stripChars(rest.substring(end), null, true);
                }
                return parts;
            }
            if (sep.isEmpty()) {
                throw new IllegalArgumentException("empty separator");
            }
            int from = 0;
            while (max < 0 || parts.size() < max) {
                int at = s.indexOf(sep, from);
                if (at < 0) {
                    break;
                }
                parts.add(s.substring(from, at));
                from = at + sep.length();
            }
            parts.add(s.substring(from));
            return parts;
        }

        private static String replace(String s, String old, String with, int count) {
            if (count < 0) {
                return s.replace(old, with);
            }
            StringBuilder out = new StringBuilder();
            int from = 0;
            for (int n = 0; n < count; n++) {
                int at = s.indexOf(old, from);
                if (at < 0) {
                    break;
                }
                out.append(s, from, at).append(with);
                from = at + old.length();
                if (old.isEmpty()) {
                    if (from >= s.length()) {
                        break;
                    }
                    out.append(s.charAt(from++));
                }
            }
            return out.append(s.substring(from)).toString();
        }

        private static String title(String s) {
            StringBuilder out = new StringBuilder(s.length());
            boolean start = true;
            for (int i = 0; i < s.length(); i++) {
                char c = s.charAt(i);
                out.append(start ? Character.toUpperCase(c) : Character.toLowerCase(c));
                start = !Character.isLetter(c);
            }
            return out.toString();
        }

        @Override
        public @Nullable Object getValue(ELContext context, @Nullable Object base, Object property) {
            return delegate.getValue(context, base, property);
        }

        @Override
        public @Nullable Class<?> getType(ELContext context, @Nullable Object base, Object property) {
            return delegate.getType(context, base, property);
        }

        @Override
        public void setValue(ELContext context, @Nullable Object base, Object property, @Nullable Object value) {
            delegate.setValue(context, base, property, value);
        }

        @Override
        public boolean isReadOnly(ELContext context, @Nullable Object base, Object property) {
            return delegate.isReadOnly(context, base, property);
        }

        @Override
        public @Nullable Iterator<FeatureDescriptor> getFeatureDescriptors(ELContext context, @Nullable Object base) {
            return delegate.getFeatureDescriptors(context, base);
        }

        @Override
        public @Nullable Class<?> getCommonPropertyType(ELContext context, @Nullable Object base) {
            return delegate.getCommonPropertyType(context, base);
        }
    }
}
