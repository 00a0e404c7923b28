package dev.oam.architecture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.EvaluationResult;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** docs/ARCHITECTURE.md's rules over the compiled classes of every product module. */
class LayeringRulesTest {
    private static JavaClasses product;

    @BeforeAll
    static void importProduct() {
        product = LayeringRules.product();
    }

    @Test
    void noPackageCycle() {
        assertThat(PackageCycles.find(product, "dev.oam.")).as("package cycles").isEmpty();
        LayeringRules.NO_PACKAGE_CYCLE.check(product);
    }

    @Test
    void modulesDependOnlyOnTheModulesTheirPomsName() {
        for (ArchRule rule : LayeringRules.moduleDirections()) {
            rule.check(product);
        }
    }

    @Test
    void onlyTheEnvironmentClassReadsTheEnvironment() {
        Set<String> allowed = new HashSet<>(LayeringRules.ENVIRONMENT_CLASSES);
        allowed.addAll(LayeringRules.KNOWN_ENVIRONMENT_READERS);
        LayeringRules.environmentReads(allowed).check(product);
    }

    @Test
    void everyKnownEnvironmentReaderStillReadsIt() { // else it leaves the list
        for (String known : LayeringRules.KNOWN_ENVIRONMENT_READERS) {
            Set<String> allowed = new HashSet<>(LayeringRules.ENVIRONMENT_CLASSES);
            allowed.addAll(LayeringRules.KNOWN_ENVIRONMENT_READERS);
            allowed.remove(known);
            EvaluationResult result = LayeringRules.environmentReads(allowed).evaluate(product);
            assertThat(result.hasViolation())
                    .as("%s no longer reads the environment: take it off KNOWN_ENVIRONMENT_READERS", known)
                    .isTrue();
        }
    }

    @Test
    void theRulesFindWhatTheyLookFor() { // fixtures: a cycle between two packages, a class reading a variable
        JavaClasses fixtures = new ClassFileImporter().importPackages("dev.oam.architecture.fixture");
        assertThat(PackageCycles.find(fixtures, "dev.oam."))
                .singleElement()
                .asString()
                .startsWith("cycle among [dev.oam.architecture.fixture.cycle.a, dev.oam.architecture.fixture.cycle.b]")
                .contains("fixture.cycle.a -> dev.oam.architecture.fixture.cycle.b: ");
        assertThatThrownBy(() -> LayeringRules.NO_PACKAGE_CYCLE.check(fixtures))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("fixture.cycle.a")
                .hasMessageContaining("fixture.cycle.b");
        assertThatThrownBy(() -> LayeringRules.environmentReads(LayeringRules.ENVIRONMENT_CLASSES)
                        .check(fixtures))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("ReadsVariable")
                .hasMessageContaining("ReadsProperty");
    }
}
