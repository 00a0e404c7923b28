package dev.oam.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import dev.oam.core.transcript.TranscriptCodec;
import java.util.List;

/**
 * The transcript codec (docs/PROTOCOL.md, "The transcript format"), which reads saved conversations from disk via
 * {@code session/create history} and {@code npc/restore}. Properties: reading any JSON either succeeds or throws
 * {@link IllegalArgumentException} naming the field; on what it accepts, decode ∘ encode is the identity: encoding what
 * was read and reading that again gives the same instructions and entries, and the same encoding.
 */
class TranscriptFuzzTest {
    @FuzzTest(maxDuration = "10m")
    void roundTrip(byte[] data) {
        JsonNode value = Inputs.json(data);
        if (value == null) {
            return;
        }
        TranscriptCodec.Restored first;
        try {
            first = TranscriptCodec.read(value, "history");
        } catch (IllegalArgumentException refused) {
            assertThat(refused.getMessage()).contains("'history");
            return;
        }
        ObjectNode encoded =
                TranscriptCodec.write(first.instructionsEntryId(), first.instructions(), List.of(), first.entries());
        TranscriptCodec.Restored second;
        try {
            second = TranscriptCodec.read(Json.parse(Json.write(encoded)), "history");
        } catch (Exception e) {
            throw new AssertionError(
                    "the codec refuses its own encoding " + Json.write(encoded) + " of " + Json.write(value), e);
        }
        assertThat(second.instructions()).isEqualTo(first.instructions());
        assertThat(second.entries()).hasSameSizeAs(first.entries());
        for (int i = 0; i < first.entries().size(); i++) {
            assertThat(second.entries().get(i).id())
                    .isEqualTo(first.entries().get(i).id());
            assertThat(second.entries().get(i).getClass())
                    .isEqualTo(first.entries().get(i).getClass());
        }
        if (first.instructions() != null) {
            assertThat(second.instructionsEntryId()).isEqualTo(first.instructionsEntryId());
        }
        ObjectNode again =
                TranscriptCodec.write(second.instructionsEntryId(), second.instructions(), List.of(), second.entries());
        assertThat(Json.write(again))
                .as("encoding after a round trip of %s", Json.write(value))
                .isEqualTo(Json.write(encoded));
    }
}
