package dev.oam.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class ErrorCodeTest {
    @Test
    void dataCodesLookUpTheirCode() {
        assertThat(ErrorCode.byDataCode("guardrail_violation")).contains(ErrorCode.GUARDRAIL_VIOLATION);
        assertThat(ErrorCode.byDataCode("generation_failed")).contains(ErrorCode.GENERATION_FAILED);
        assertThat(ErrorCode.byDataCode("GUARDRAIL_VIOLATION")).isEmpty();
        assertThat(ErrorCode.byDataCode("nope")).isEmpty();
    }

    @Test
    void codesAndDataCodesAreUnique() {
        assertThat(Arrays.stream(ErrorCode.values()).map(ErrorCode::code)).doesNotHaveDuplicates();
        assertThat(Arrays.stream(ErrorCode.values()).map(ErrorCode::dataCode)).doesNotHaveDuplicates();
    }

    @Test
    void protocolNumbersMatchTheErrorTable() {
        assertThat(ErrorCode.INVALID_PARAMS.code()).isEqualTo(-32602);
        assertThat(ErrorCode.MODEL_UNAVAILABLE.code()).isEqualTo(-32001);
        assertThat(ErrorCode.CANCELLED.code()).isEqualTo(-32009);
        assertThat(ErrorCode.GENERATION_FAILED.code()).isEqualTo(-32012);
        assertThat(ErrorCode.SUBSCRIPTION_NOT_FOUND.code()).isEqualTo(-32056);
    }
}
