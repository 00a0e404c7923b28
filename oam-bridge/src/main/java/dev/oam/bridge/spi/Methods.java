package dev.oam.bridge.spi;

/** The protocol's method names, in one place. */
public final class Methods {
    public static final String INITIALIZE = "initialize";
    public static final String PING = "ping";
    public static final String MODEL_AVAILABILITY = "model/availability";
    public static final String SHUTDOWN = "shutdown";
    /** This edition's extension: models downloaded into the model cache, with progress (docs/PROTOCOL.md). */
    public static final String MODEL_PULL = "model/pull";

    public static final String MODEL_CANCEL_PULL = "model/cancelPull";
    public static final String MODEL_PROGRESS = "model/progress";

    public static final String SESSION_CREATE = "session/create";
    public static final String SESSION_RESPOND = "session/respond";
    public static final String SESSION_CANCEL = "session/cancel";
    public static final String SESSION_RESET = "session/reset";
    public static final String SESSION_DELETE = "session/delete";
    public static final String SESSION_LIST = "session/list";
    public static final String SESSION_SET_INSTRUCTIONS = "session/setInstructions";
    public static final String SESSION_SET_CONTEXT_NOTE = "session/setContextNote";
    public static final String SESSION_SET_TOOLS = "session/setTools";
    public static final String SESSION_TRANSCRIPT = "session/transcript";
    public static final String SESSION_COMPACT = "session/compact";
    public static final String SCHEMA_VALIDATE = "schema/validate";
    public static final String TOOLS_VALIDATE = "tools/validate";

    public static final String SESSION_EVENT = "session/event";
    public static final String TOOL_CALL = "tool/call";
    public static final String TOOL_CANCEL = "tool/cancel";

    private Methods() {}
}
