package dev.oam.core;

import org.jspecify.annotations.Nullable;

/** {@link Environment#system()}: the one place product code reads the process environment and system properties. */
final class SystemEnvironment implements Environment {
    static final SystemEnvironment INSTANCE = new SystemEnvironment();

    private SystemEnvironment() {}

    @Override
    public @Nullable String variable(String name) {
        return System.getenv(name);
    }

    @Override
    public @Nullable String property(String name) {
        return System.getProperty(name);
    }

    @Override
    public String toString() {
        return "the process environment";
    }
}
