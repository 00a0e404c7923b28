package dev.oam.model.llama.jni;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import de.kherud.llama.InferenceParameters;
import dev.oam.core.json.Json;
import dev.oam.model.llama.engine.SamplerExtras;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The JNI engine hands the sampler settings to llama.cpp's server code by its own names, as well-formed JSON. */
class JniSamplerParametersTest {
    @Test
    void everyExtraIsPassedByTheServersName() throws Exception {
        InferenceParameters p = new InferenceParameters("x");
        JniEngine.extras(
                p,
                new SamplerExtras(
                        0.05, 0.9, 1.1, -1, 0.2, 0.3, 0.8, 1.5, 3, 256, List.of("\n", "\"quoted\""), 0.5, 0.1));
        JsonNode json = Json.parse(p.toString());
        assertThat(json.path("min_p").asDouble()).isEqualTo(0.05);
        assertThat(json.path("typical_p").asDouble()).isEqualTo(0.9);
        assertThat(json.path("repeat_penalty").asDouble()).isEqualTo(1.1);
        assertThat(json.path("repeat_last_n").asInt()).isEqualTo(-1);
        assertThat(json.path("presence_penalty").asDouble()).isEqualTo(0.2);
        assertThat(json.path("frequency_penalty").asDouble()).isEqualTo(0.3);
        assertThat(json.path("dry_multiplier").asDouble()).isEqualTo(0.8);
        assertThat(json.path("dry_base").asDouble()).isEqualTo(1.5);
        assertThat(json.path("dry_allowed_length").asInt()).isEqualTo(3);
        assertThat(json.path("dry_penalty_last_n").asInt()).isEqualTo(256);
        assertThat(json.path("dry_sequence_breakers").toString()).isEqualTo("[\"\\n\",\"\\\"quoted\\\"\"]");
        assertThat(json.path("xtc_probability").asDouble()).isEqualTo(0.5);
        assertThat(json.path("xtc_threshold").asDouble()).isEqualTo(0.1);
        InferenceParameters none = new InferenceParameters("x");
        JniEngine.extras(none, SamplerExtras.NONE);
        assertThat(Json.parse(none.toString()).has("min_p")).isFalse();
    }
}
