package dev.oam.model.openai;

import dev.oam.core.Log;

/**
 * What the bridge has learned about one server and model ({@code baseUrl} + {@code model}), shared by
 * every session that uses it: whether forced steps must be emulated (the server ignores
 * {@code tool_choice}), whether tools must be emulated altogether (the server rejects them), and
 * whether streaming must be off when tools are sent. Facts are only ever learned, never forgotten,
 * for the life of the backend. Fields are volatile: sessions read and set them from their own threads.
 */
final class Endpoint {
    private final String name;
    private volatile boolean ignoresToolChoice;
    private volatile boolean rejectsTools;
    private volatile boolean refusesStreamingWithTools;

    Endpoint(String name) {
        this.name = name;
    }

    boolean ignoresToolChoice() {
        return ignoresToolChoice;
    }

    boolean rejectsTools() {
        return rejectsTools;
    }

    boolean refusesStreamingWithTools() {
        return refusesStreamingWithTools;
    }

    void learnIgnoresToolChoice() {
        if (!ignoresToolChoice) {
            ignoresToolChoice = true;
            Log.info(name + " answered a forced step without a tool call; forced steps are emulated from now on");
        }
    }

    void learnRejectsTools(String why) {
        if (!rejectsTools) {
            rejectsTools = true;
            Log.info(name + " rejected tools (" + why + "); tool calls are emulated from now on");
        }
    }

    void learnRefusesStreamingWithTools() {
        if (!refusesStreamingWithTools) {
            refusesStreamingWithTools = true;
            Log.info(name + " refused to stream with tools; steps with tools are no longer streamed");
        }
    }
}
