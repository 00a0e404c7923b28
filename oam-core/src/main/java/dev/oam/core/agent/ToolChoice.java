package dev.oam.core.agent;

/** How the first model step of a turn may use tools. */
public sealed interface ToolChoice {
    Auto AUTO = new Auto();
    None NONE = new None();
    Required REQUIRED = new Required();
    Explicit EXPLICIT = new Explicit();

    /** The model decides. */
    record Auto() implements ToolChoice {}

    /** No tools at all. */
    record None() implements ToolChoice {}

    /** The first step must call a tool. */
    record Required() implements ToolChoice {}

    /** The first step calls a tool or the hidden {@code respond_directly} tool. */
    record Explicit() implements ToolChoice {}

    /** The first step must call this tool. */
    record Named(String tool) implements ToolChoice {}
}
