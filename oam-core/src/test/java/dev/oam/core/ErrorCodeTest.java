package dev.oam.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
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

    /** docs/PROTOCOL.md's error table (the protocol's codes as this edition uses them) lists exactly these codes. */
    @Test
    void theDocumentedErrorTableListsExactlyTheseCodes() throws IOException {
        Path doc = Path.of("../docs/PROTOCOL.md");
        Pattern row = Pattern.compile("^\\| (-\\d+) \\| `([a-z_]+)` \\|", Pattern.MULTILINE);
        Map<Integer, String> documented = new LinkedHashMap<>();
        Matcher m = row.matcher(Files.readString(doc, StandardCharsets.UTF_8));
        while (m.find()) {
            assertThat(documented.put(Integer.parseInt(m.group(1)), m.group(2)))
                    .as("row %s twice", m.group(1))
                    .isNull();
        }
        Map<Integer, String> inCode = new LinkedHashMap<>();
        for (ErrorCode code : ErrorCode.values()) {
            inCode.put(code.code(), code.dataCode());
        }
        assertThat(documented).as("the table in %s", doc).hasSizeGreaterThan(20).isEqualTo(inCode);
    }
}
