package dev.oam.fuzz;

import org.jspecify.annotations.Nullable;

/**
 * One line of {@link JsonRpcFuzzTest}'s input as the transport sees it; {@code id} as the bridge echoes it (null: none,
 * or one it refuses). A top-level class on purpose: a record nested in the fuzz test class broke under Jazzer's
 * instrumentation on JDK 25 (first a HotSpot crash in the nestmate access check, then a {@code NoSuchFieldError} for
 * its field), see docs/RELIABILITY.md.
 */
final class FramedLine {
    private final String text;
    private final @Nullable String id;
    private final boolean request;

    FramedLine(String text, @Nullable String id, boolean request) {
        this.text = text;
        this.id = id;
        this.request = request;
    }

    String text() {
        return text;
    }

    @Nullable
    String id() {
        return id;
    }

    boolean request() {
        return request;
    }
}
