package dev.oam.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import dev.oam.bridge.spi.BridgeException;
import org.junit.jupiter.api.Test;

/** A member's error keeps the wire's wording and offers the member and a short form for hosts. */
class BridgeExceptionTest {
    @Test
    void anInvalidParameterHasTheWireMessageAndAShortFormNamingTheMember() {
        BridgeException e = BridgeException.invalidParameter("tools[0].description", " must be a string.");
        assertThat(e.getMessage()).isEqualTo("Parameter 'tools[0].description' must be a string.");
        assertThat(e.toJson().path("code").asInt()).isEqualTo(-32602);
        assertThat(e.member()).contains("tools[0].description");
        assertThat(e.shortMessage()).isEqualTo("'tools[0].description' must be a string.");
    }

    @Test
    void aMissingParameterToo() {
        BridgeException e = BridgeException.missingParameter("session");
        assertThat(e.getMessage()).isEqualTo("Missing required parameter 'session'.");
        assertThat(e.shortMessage()).isEqualTo("'session' is missing.");
    }

    @Test
    void anErrorAboutNoMemberIsItsOwnShortForm() {
        BridgeException e = BridgeException.invalidParams("Exactly one of 'a' or 'b'.");
        assertThat(e.member()).isEmpty();
        assertThat(e.shortMessage()).isEqualTo("Exactly one of 'a' or 'b'.");
    }
}
