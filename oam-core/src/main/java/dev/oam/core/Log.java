package dev.oam.core;

import java.io.PrintStream;
import java.time.LocalTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The project's logging, never on standard output (which carries protocol messages in {@code oam stdio}).
 *
 * <p>Two destinations. By default messages go to the JDK's {@link System.Logger} named {@value #LOGGER_NAME}, so an
 * in-process host routes them with its own logging (JUL's configuration, or the System.LoggerFinder that SLF4J, Log4j
 * and the like provide). The transports that own their process ({@code oam stdio}, {@code oam serve}, the C ABI's JVM)
 * call {@link #toConsole()} instead: one line per message on standard error, {@code HH:mm:ss.SSS oam level: message}.
 *
 * <p>{@link #setLevel} sets a process-wide threshold for both destinations (for the console it is warning until set);
 * with the system logger, its own configuration may drop more.
 */
public final class Log {
    public enum Level {
        DEBUG(System.Logger.Level.DEBUG),
        INFO(System.Logger.Level.INFO),
        WARNING(System.Logger.Level.WARNING),
        ERROR(System.Logger.Level.ERROR),
        OFF(System.Logger.Level.OFF);

        private final System.Logger.Level system;

        Level(System.Logger.Level system) {
            this.system = system;
        }

        /** The {@link System.Logger.Level} messages at this level are logged at. */
        public System.Logger.Level system() {
            return system;
        }
    }

    /** The name of the {@link System.Logger} messages go to unless {@link #toConsole()} was called. */
    public static final String LOGGER_NAME = "dev.oam";

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss.SSS");
    private static final Level CONSOLE_DEFAULT = Level.WARNING;
    private static volatile @Nullable Level
            level; // null: the console's default, or whatever the system logger lets through
    private static volatile @Nullable PrintStream console; // null: the system logger
    private static volatile System.@Nullable Logger system;

    private Log() {}

    /** Messages go to standard error from now on, in the transports' one-line format. */
    public static void toConsole() {
        console = System.err;
    }

    /** Messages go to {@code stream} in the console format (tests capture expected errors this way). */
    public static void setStream(PrintStream stream) {
        console = stream;
    }

    /** Messages go to the {@link System.Logger} {@value #LOGGER_NAME} again (the default). */
    public static void toSystemLogger() {
        console = null;
    }

    public static void setLevel(Level newLevel) {
        level = newLevel;
    }

    /** The threshold in force for the console (warning until {@link #setLevel} is called). */
    public static Level level() {
        Level set = level;
        return set != null ? set : CONSOLE_DEFAULT;
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
            default ->
                throw new IllegalArgumentException(
                        "unknown log level '" + text + "' (debug, info, warning, error, off)");
        };
    }

    /** Whether a message at {@code at} would be written anywhere (guards for messages that cost to build). */
    public static boolean enabled(Level at) {
        if (at == Level.OFF) {
            return false;
        }
        Level set = level;
        if (console != null) {
            Level threshold = set != null ? set : CONSOLE_DEFAULT;
            return threshold != Level.OFF && at.ordinal() >= threshold.ordinal();
        }
        if (set != null && (set == Level.OFF || at.ordinal() < set.ordinal())) {
            return false;
        }
        return systemLogger().isLoggable(at.system());
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

    public static void error(String message, @Nullable Throwable error) {
        log(Level.ERROR, message, error);
    }

    private static void log(Level at, String message, @Nullable Throwable error) {
        if (!enabled(at)) {
            return;
        }
        PrintStream out = console;
        if (out == null) {
            if (error == null) {
                systemLogger().log(at.system(), message);
            } else {
                systemLogger().log(at.system(), message, error);
            }
            return;
        }
        synchronized (out) {
            out.println(LocalTime.now().format(TIME) + " oam " + at.name().toLowerCase(Locale.ROOT) + ": " + message);
            if (error != null) {
                error.printStackTrace(out);
            }
        }
    }

    private static System.Logger systemLogger() {
        System.Logger logger = system;
        if (logger == null) {
            logger = System.getLogger(LOGGER_NAME);
            system = logger;
        }
        return logger;
    }
}
