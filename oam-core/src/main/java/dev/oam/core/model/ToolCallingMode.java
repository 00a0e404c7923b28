package dev.oam.core.model;

/** The per-step mode, as reported in {@code steps[].toolCallingMode}. */
public enum ToolCallingMode {
    REQUIRED("required"),
    ALLOWED("allowed"),
    DISALLOWED("disallowed");

    private final String wireName;

    ToolCallingMode(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }
}
