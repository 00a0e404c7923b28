package dev.oam.model.openai;

import dev.oam.core.Log;
import org.jspecify.annotations.Nullable;

/**
 * What the bridge has learned about one server and model ({@code baseUrl} + {@code model}), shared by every session
 * that uses it: whether forced steps must be emulated (the server ignores {@code tool_choice}), whether tools must be
 * emulated altogether (the server rejects them), and whether streaming must be off when tools are sent, whether it is
 * llama.cpp's server (which takes {@code cache_prompt}), and how the server takes a JSON Schema for the answer
 * ({@link SchemaFormat}: tried in order until one's output validates, then kept). Facts are only ever learned, never
 * forgotten, for the life of the backend. Fields are volatile: sessions read and set them from their own threads; the
 * schema format's steps are synchronized.
 */
final class Endpoint {
    private final String name;
    private volatile boolean ignoresToolChoice;
    private volatile boolean rejectsTools;
    private volatile boolean refusesStreamingWithTools;
    /** The server is llama.cpp's, which takes {@code cache_prompt} (other servers may refuse unknown members). */
    private volatile boolean llamaCpp;
    /** The schema format whose output validated; {@code null} while it is being looked for. */
    private volatile @Nullable SchemaFormat schemaFormat;
    /** The candidate under test while {@link #schemaFormat} is unknown. */
    private volatile int schemaCandidate;
    /** Every candidate was tried and none validated: the standard one is sent, unverified, from then on. */
    private volatile boolean noSchemaFormatHonoured;
    /** A forced step came back without a call in native mode and was warned about. */
    private volatile boolean warnedForcedWithoutCall;

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

    boolean isLlamaCpp() {
        return llamaCpp;
    }

    void learnLlamaCpp(String how) {
        if (!llamaCpp) {
            llamaCpp = true;
            Log.info(name + " is llama.cpp's server (" + how
                    + "); requests ask it to reuse its prompt cache from now on");
        }
    }

    void learnIgnoresToolChoice() {
        if (!ignoresToolChoice) {
            ignoresToolChoice = true;
            Log.info(name + " answered a forced step without a tool call; forced steps are emulated from now on");
        }
    }

    /** A forced step came back without a call in native mode (the step fails retryably); warned once. */
    void warnForcedWithoutCall(String what) {
        if (!warnedForcedWithoutCall) {
            warnedForcedWithoutCall = true;
            Log.warning(name + " answered a forced step (tool_choice) with " + what
                    + " instead of a tool call; such a step fails with a retryable generation_failed, which the agent"
                    + " asks again within maxAttempts (toolCallMode auto would emulate forced steps instead)");
        }
    }

    @Override
    public String toString() {
        return name;
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

    /** The format to send a schema in: the verified one, else the candidate under test. */
    SchemaFormat schemaFormat() {
        SchemaFormat verified = schemaFormat;
        if (verified != null) {
            return verified;
        }
        return noSchemaFormatHonoured ? SchemaFormat.RESPONSE_FORMAT : SchemaFormat.CANDIDATES.get(schemaCandidate);
    }

    /** Whether outputs still decide the schema format (it is neither verified nor given up on). */
    boolean detectsSchemaFormat() {
        return schemaFormat == null && !noSchemaFormatHonoured;
    }

    /** An output sent with {@code format} validated against its schema: the server honours it. */
    synchronized void learnSchemaHonoured(SchemaFormat format) {
        if (schemaFormat == null) {
            schemaFormat = format;
            Log.info(name + " honours a JSON Schema sent as " + format.label() + "; schemas go that way from now on");
        }
    }

    /**
     * An output sent with {@code format} did not validate (or the server refused the format): the next candidate is
     * tried. Returns whether there is one to try now; {@code false} once every candidate failed.
     */
    synchronized boolean learnSchemaIgnored(SchemaFormat format, String why) {
        if (schemaFormat != null) {
            return false; // another session verified one meanwhile: the step's output is the model's fault
        }
        if (noSchemaFormatHonoured) {
            return false;
        }
        int index = SchemaFormat.CANDIDATES.indexOf(format);
        if (index < schemaCandidate) {
            return true; // another session has moved on already: retry with the current candidate
        }
        if (index + 1 < SchemaFormat.CANDIDATES.size()) {
            schemaCandidate = index + 1;
            Log.info(name + " did not honour a JSON Schema sent as " + format.label() + " (" + why + "); trying "
                    + SchemaFormat.CANDIDATES.get(index + 1).label());
            return true;
        }
        noSchemaFormatHonoured = true;
        Log.warning(name + " honoured a JSON Schema in none of the ways tried ("
                + String.join(
                        ", ",
                        SchemaFormat.CANDIDATES.stream()
                                .map(SchemaFormat::label)
                                .toList()) + "); answers are checked, not constrained");
        return false;
    }
}
