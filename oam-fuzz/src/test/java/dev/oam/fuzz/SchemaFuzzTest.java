package dev.oam.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.schema.GenerationSchema;
import dev.oam.core.schema.SchemaException;
import java.util.Optional;
import java.util.Random;

/**
 * The JSON Schema converter and the validator. Properties: converting any JSON either succeeds or throws
 * {@link SchemaException} (with a {@code #} pointer), never anything else; converting the generation schema again gives
 * the same schema (it is a fixed point); every value {@link SchemaSampler} builds from the generation schema's grammar
 * validates, still validates with its keys put in schema order, and validating any value never throws.
 */
class SchemaFuzzTest {
    @FuzzTest(maxDuration = "10m")
    void convertAndValidate(byte[] data) {
        JsonNode schema = Inputs.json(data);
        if (schema == null) {
            return;
        }
        for (boolean parameters : new boolean[] {false, true}) {
            GenerationSchema converted;
            try {
                converted = parameters
                        ? GenerationSchema.convertParameters(schema, "fuzz")
                        : GenerationSchema.convert(schema, "fuzz");
            } catch (SchemaException refused) {
                assertThat(refused.schemaPath()).startsWith("#");
                assertThat(refused.getMessage()).isNotBlank();
                continue;
            }
            GenerationSchema again;
            try {
                again = parameters
                        ? GenerationSchema.convertParameters(converted.json(), "fuzz")
                        : GenerationSchema.convert(converted.json(), "fuzz");
            } catch (SchemaException e) {
                throw new AssertionError(
                        "the generation schema " + converted.json() + " is refused when converted again: "
                                + e.schemaPath() + ": " + e.getMessage(),
                        e);
            }
            assertThat(again.json())
                    .as("converting the generation schema again")
                    .isEqualTo(converted.json());

            Random random = Inputs.random(data, parameters ? 1 : 0);
            for (int i = 0; i < 4; i++) {
                JsonNode value = new SchemaSampler(converted.json(), random).sample();
                if (value == null) {
                    continue; // the grammar's recursion did not bottom out within the sampler's depth
                }
                Optional<String> violation = converted.firstViolation(value);
                assertThat(violation)
                        .as("a value the schema %s allows: %s", converted.json(), value)
                        .isEmpty();
                assertThat(converted.firstViolation(converted.reorder(value)))
                        .as("reordered %s", value)
                        .isEmpty();
                assertThat(converted.firstViolation(converted.withoutUnknownKeys(value)))
                        .as("trimmed %s", value)
                        .isEmpty();
            }
            converted.firstViolation(schema); // any value: a verdict, never an exception
        }
    }
}
