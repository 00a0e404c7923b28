package dev.oam.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.lang.ArchRule;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** The rules over compiled classes, and the import of the product's classes they are checked on. */
final class LayeringRules {
    private LayeringRules() {}

    /** Every package is its own slice: no package may reach itself again through others. */
    static final ArchRule NO_PACKAGE_CYCLE =
            slices().matching("dev.oam.(**)").should().beFreeOfCycles().because("layers point one way");

    /** The one environment class: {@code Environment} with the process's {@code SystemEnvironment} behind it. */
    static final Set<String> ENVIRONMENT_CLASSES = Set.of("dev.oam.core.Environment", "dev.oam.core.SystemEnvironment");

    /**
     * Classes allowed to read the environment themselves besides {@link #ENVIRONMENT_CLASSES}: none (every product
     * class reads settings through {@code Environment}). Kept so an exception, if one is ever needed, is named here and
     * {@code LayeringRulesTest} fails once it no longer reads.
     */
    static final Set<String> KNOWN_ENVIRONMENT_READERS = Set.of();

    /**
     * Reads of environment variables or JVM system properties, by call or method reference: {@code System.getenv},
     * {@code getProperty}, {@code getProperties}, and the {@code Boolean.getBoolean}/{@code Integer.getInteger}/
     * {@code Long.getLong} that read a property.
     */
    static final DescribedPredicate<JavaAccess<?>> READS_ENVIRONMENT = DescribedPredicate.describe(
            "System.getenv/getProperty/getProperties, Boolean.getBoolean, Integer.getInteger or Long.getLong",
            access -> {
                String name = access.getTarget().getName();
                return switch (access.getTarget().getOwner().getName()) {
                    case "java.lang.System" ->
                        name.equals("getenv") || name.equals("getProperty") || name.equals("getProperties");
                    case "java.lang.Boolean" -> name.equals("getBoolean");
                    case "java.lang.Integer" -> name.equals("getInteger");
                    case "java.lang.Long" -> name.equals("getLong");
                    default -> false;
                };
            });

    /**
     * No environment read outside the environment class. {@code oam-testing} is left out: a test kit, not in
     * {@code oam.jar}, whose job includes reading the test run's own variables ({@code OAM_TEST_…}).
     */
    static ArchRule environmentReads(Set<String> allowed) {
        return noClasses()
                .that(DescribedPredicate.describe(
                        "are outside " + allowed + " and oam-testing",
                        (JavaClass type) -> !allowed.contains(outermost(type).getName())
                                && !type.getPackageName().startsWith(ProductModule.TESTING.rootPackage)))
                .should()
                .accessTargetWhere(READS_ENVIRONMENT)
                .because("settings come from an Environment read at the entry points (docs/ARCHITECTURE.md)");
    }

    /** One rule per module: its classes use no class of a module it does not depend on (through its pom). */
    static List<ArchRule> moduleDirections() {
        List<ArchRule> rules = new ArrayList<>();
        for (ProductModule module : ProductModule.values()) {
            List<String> forbidden = new ArrayList<>();
            for (ProductModule other : ProductModule.values()) {
                if (!module.reads().contains(other)) {
                    forbidden.add(other.packages());
                }
            }
            forbidden.add("dev.oam.bench..");
            rules.add(noClasses()
                    .that()
                    .resideInAPackage(module.packages())
                    .should()
                    .dependOnClassesThat()
                    .resideInAnyPackage(forbidden.toArray(String[]::new))
                    .as(module.folder + " uses only " + module.reads()));
        }
        return rules;
    }

    static JavaClass outermost(JavaClass type) {
        JavaClass outer = type;
        while (outer.getEnclosingClass().isPresent()) {
            outer = outer.getEnclosingClass().get();
        }
        return outer;
    }

    /**
     * The main classes of every product module, from their {@code target/classes} (with the multi-release
     * {@code META-INF/versions/*} classes), without the module descriptors.
     */
    static JavaClasses product() {
        List<java.nio.file.Path> folders = new ArrayList<>();
        for (ProductModule module : ProductModule.values()) {
            if (!Files.isDirectory(module.classes())) {
                throw new IllegalStateException("not built: " + module.classes());
            }
            folders.add(module.classes());
        }
        return new ClassFileImporter()
                .withImportOption(location -> !location.contains("module-info"))
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPaths(folders);
    }
}
