package dev.oam.core;

import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Where a host's settings come from: environment variables ({@code OAM_MODEL}, {@code OAM_LLAMA_THREADS}, …) and the
 * JVM switches ({@code -Doam.…} system properties). Product code reads both through an {@code Environment} and never
 * through {@link System#getenv} or {@link System#getProperty}: {@link #system()} is the process's, a test passes its
 * own (a lambda is one with variables only), and the C library's {@code oam_bridge_create_with_settings} gives each
 * bridge its settings {@linkplain #over over} the process's.
 *
 * <p>Facts of the JVM itself ({@code os.name}, {@code java.home}, {@code user.home}, …) are not settings: they are read
 * through {@link #system()} too, as {@link #property} of it.
 */
@FunctionalInterface
public interface Environment {
    /** The variable's value, or null when it is not set (an empty value is set). */
    @Nullable
    String variable(String name);

    /** The system property's value, or null when it is not set; an environment of variables only has none. */
    default @Nullable String property(String name) {
        return null;
    }

    /** The process's environment variables and system properties, read when asked (never cached). */
    static Environment system() {
        return SystemEnvironment.INSTANCE;
    }

    /**
     * A fact of this JVM ({@code os.name}, {@code os.arch}), or "" when unknown: the same for every host in the
     * process, so not a setting. For the little code that runs below every entry point and keeps no settings record
     * (the POSIX calls' set-up); a setting is read through the {@code Environment} an entry point was given.
     */
    static String jvmFact(String name) {
        String value = SystemEnvironment.INSTANCE.property(name);
        return value != null ? value : "";
    }

    /** Exactly {@code variables} (copied), no properties. */
    static Environment of(Map<String, String> variables) {
        Map<String, String> copy = Map.copyOf(variables);
        return copy::get;
    }

    /** Exactly {@code variables} and {@code properties} (both copied). */
    static Environment of(Map<String, String> variables, Map<String, String> properties) {
        Map<String, String> variableCopy = Map.copyOf(variables);
        Map<String, String> propertyCopy = Map.copyOf(properties);
        return new Environment() {
            @Override
            public @Nullable String variable(String name) {
                return variableCopy.get(name);
            }

            @Override
            public @Nullable String property(String name) {
                return propertyCopy.get(name);
            }
        };
    }

    /** This environment's variables and properties where set, else {@code base}'s ({@code settings.over(system())}). */
    default Environment over(Environment base) {
        Objects.requireNonNull(base, "base");
        Environment top = this;
        return new Environment() {
            @Override
            public @Nullable String variable(String name) {
                String value = top.variable(name);
                return value != null ? value : base.variable(name);
            }

            @Override
            public @Nullable String property(String name) {
                String value = top.property(name);
                return value != null ? value : base.property(name);
            }
        };
    }

    /** This environment with {@code names} unset (variables only; properties stay). */
    default Environment without(Set<String> names) {
        Set<String> hidden = Set.copyOf(names);
        Environment all = this;
        return new Environment() {
            @Override
            public @Nullable String variable(String name) {
                return hidden.contains(name) ? null : all.variable(name);
            }

            @Override
            public @Nullable String property(String name) {
                return all.property(name);
            }
        };
    }

    /** {@link #variable}, or null when it is unset or blank; the value stripped otherwise. */
    default @Nullable String nonBlank(String name) {
        String value = variable(name);
        return value == null || value.isBlank() ? null : value.strip();
    }

    /** The system property, or null when it is unset or blank; the value stripped otherwise. */
    default @Nullable String nonBlankProperty(String name) {
        String value = property(name);
        return value == null || value.isBlank() ? null : value.strip();
    }

    /**
     * The integer variable {@code name} from {@code min} to {@code max}: the one parser of every integer setting, so a
     * value gets the same answer whoever reads it. Null when it is unset or blank, and when it is not such an integer
     * (then a warning names the variable, the value and the range, and the caller uses its default).
     */
    default @Nullable Integer integer(String name, int min, int max) {
        String text = nonBlank(name);
        if (text == null) {
            return null;
        }
        try {
            int value = Integer.parseInt(text);
            if (value >= min && value <= max) {
                return value;
            }
        } catch (NumberFormatException e) {
            // warned below
        }
        Log.warning(name + "='" + variable(name) + "' is not an integer from " + min + " to " + max
                + "; using the default");
        return null;
    }

    /** The variable naming the folder the project keeps its caches in ({@link #cacheFolder}). */
    String CACHE_DIR_VARIABLE = "OAM_CACHE_DIR";

    /** The freedesktop variable naming the user's cache folder ({@code ~/.cache} when unset). */
    String XDG_CACHE_VARIABLE = "XDG_CACHE_HOME";

    /**
     * The project's cache folder: {@value #CACHE_DIR_VARIABLE}, else {@code ${XDG_CACHE_HOME:-~/.cache}/oam} (the home
     * folder is the JVM's {@code user.home}, {@code .} when this environment has none).
     */
    default Path cacheFolder() {
        String oam = nonBlank(CACHE_DIR_VARIABLE);
        if (oam != null) {
            return Path.of(oam);
        }
        return userCacheFolder().resolve("oam");
    }

    /** {@code ${XDG_CACHE_HOME:-~/.cache}}: the user's cache folder. */
    default Path userCacheFolder() {
        String xdg = nonBlank(XDG_CACHE_VARIABLE);
        if (xdg != null) {
            return Path.of(xdg);
        }
        String home = property("user.home");
        return Path.of(home != null ? home : ".", ".cache");
    }
}
