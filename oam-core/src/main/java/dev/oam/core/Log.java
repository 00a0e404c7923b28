package dev.oam.core;

import java.io.PrintStream;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/**
 * The project's logging: one line per message on standard error, never on standard output (which
 * carries protocol messages in {@code oam stdio}). The level is process-wide.
 */
public final class Log {
    public enum Level { DEBUG, INFO, WARNING, ERROR, OFF }

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    private static volatile Level level = Level.WARNING;
    private static volatile PrintStream err = System.err;

    private Log() {}

    public static void setLevel(Level newLevel) {
        level = newLevel;
    }

    public static Level level() {
        return level;
    }

    /** Parses {@code debug|info|warning|error|off} (also {@code warn}). */
    public static Level parseLevel(String text) {
        String lower = text.toLowerCase(Locale.ROOT);
        return switch (lower) {
            case "debug", "trace" -> Level.DEBUG;
            case "info" -> Level.INFO;
            case "warning", "warn" -> Level.WARNING;
            case "error" -> Level.ERROR;
            case "off", "none", "quiet" -> Level.OFF;
            default -> throw new IllegalArgumentException("unknown log level '" + text + "' (debug, info, warning, error, off)");
        };
    }

    /** Redirects log output (tests capture expected errors this way). */
    public static void setStream(PrintStream stream) {
        err = stream;
    }

    public static boolean enabled(Level at) {
        return at.ordinal() >= level.ordinal() && level != Level.OFF;
    }

    public static void debug(String message) {
        log(Level.DEBUG, message, null);
    }

    public static void info(String message) {
        log(Level.INFO, message, null);
    }

    public static void warning(String message) {
        log(Level.WARNING, message, null);
    }

    public static void error(String message, Throwable error) {
        log(Level.ERROR, message, error);
    }

    private static void log(Level at, String message, Throwable error) {
        if (!enabled(at)) {
            return;
        }
        PrintStream out = err;
        synchronized (out) {
            out.println(LocalTime.now().format(TIME) + " oam " + at.name().toLowerCase(Locale.ROOT) + ": " + message);
            if (error != null) {
                error.printStackTrace(out);
            }
        }
    }
}
