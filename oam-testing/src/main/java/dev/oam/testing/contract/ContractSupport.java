package dev.oam.testing.contract;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.testing.Conversation;
import dev.oam.testing.ProtocolClient;

/**
 * What every contract suite shares: how to connect, and helpers for scripted sessions (public, so the parts in
 * {@code dev.oam.testing.contract} use them too).
 */
public abstract class ContractSupport implements ContractFixture {
    public static final String GATE_TOOL = "{\"name\":\"open_gate\",\"description\":\"Open a named gate.\","
            + "\"parameters\":{\"type\":\"object\",\"properties\":{\"gate\":{\"type\":\"string\"}},\"required\":[\"gate\"]}}";
    public static final String BELL_TOOL = "{\"name\":\"ring_bell\",\"description\":\"Ring the bell.\"}";

    /** Connects a client to a fresh bridge started with these {@code oam stdio} flags. */
    protected abstract ProtocolClient connect(String... flags) throws Exception;

    /** For the test class that runs this contract against its transport. */
    protected ContractSupport() {}

    @Override
    public final ProtocolClient start(String... flags) throws Exception {
        return connect(flags);
    }

    public static String scripted(String stepsJson) {
        return "{\"type\":\"scripted\",\"steps\":" + stepsJson + "}";
    }

    /** Creates a session with tools, options and a script; returns the create result. */
    public static JsonNode create(
            Conversation c, String session, String toolsJson, String optionsJson, String stepsJson) {
        String id = "create-" + session;
        return c.call(
                id,
                "session/create",
                "{\"session\":\"" + session + "\",\"tools\":" + toolsJson + ",\"options\":" + optionsJson
                        + ",\"model\":" + scripted(stepsJson) + "}");
    }

    public static String code(JsonNode error) {
        return error.path("data").path("code").asText();
    }
}
