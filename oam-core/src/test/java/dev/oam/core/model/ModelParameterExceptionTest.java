package dev.oam.core.model;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ModelParameterExceptionTest {
    @Test
    void theMessageNamesTheMemberAndAHostCanNameItItsOwnWay() {
        ModelParameterException bad = ModelParameterException.invalid("model.baseUrl", "must be an http:// URL.");
        assertThat(bad).hasMessage("Parameter 'model.baseUrl' must be an http:// URL.");
        assertThat(bad.member()).isEqualTo("model.baseUrl");
        assertThat(bad.isMissing()).isFalse();
        assertThat(bad.describe("--model")).isEqualTo("Parameter '--model' must be an http:// URL.");
        assertThat("--model " + bad.problem()).isEqualTo("--model must be an http:// URL.");
    }

    @Test
    void aColonProblemAndAMissingMemberKeepTheirWireForms() {
        assertThat(ModelParameterException.invalid("model.path", ": no such file"))
                .hasMessage("Parameter 'model.path': no such file")
                .satisfies(e -> assertThat(e.shortMessage()).isEqualTo("'model.path': no such file"));
        assertThat(ModelParameterException.missing("model.path", "the .gguf file to load"))
                .hasMessage("Missing required parameter 'model.path' (the .gguf file to load).");
        assertThat(ModelParameterException.missing("model.model", ""))
                .hasMessage("Missing required parameter 'model.model'.")
                .satisfies(e -> assertThat(e.isMissing()).isTrue());
    }
}
