package dev.oam.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/ARCHITECTURE.md's rules over the main sources of every product module ({@code src/main/java} and the
 * multi-release {@code src/main/java22}): file and package sizes, one simple name per class.
 */
class SourceRulesTest {
    static final int MAX_LINES = 700;
    static final int MAX_PACKAGE_FILES = 25;

    /** A main source file: its module, its package and its path. */
    record Source(ProductModule module, String packageName, Path path) {
        String simpleName() {
            String file = path.getFileName().toString();
            return file.substring(0, file.length() - ".java".length());
        }
    }

    private static List<Source> sources;

    @BeforeAll
    static void listSources() throws IOException {
        sources = new ArrayList<>();
        for (ProductModule module : ProductModule.values()) {
            try (Stream<Path> roots = Files.list(module.mainSources())) {
                for (Path root : roots.filter(p -> p.getFileName().toString().startsWith("java"))
                        .toList()) {
                    try (Stream<Path> files = Files.walk(root)) {
                        files.filter(p -> p.toString().endsWith(".java"))
                                .filter(p -> !p.endsWith("module-info.java") && !p.endsWith("package-info.java"))
                                .forEach(p -> sources.add(new Source(
                                        module,
                                        root.relativize(p.getParent())
                                                .toString()
                                                .replace('/', '.'),
                                        p)));
                    }
                }
            }
        }
        assertThat(sources).as("main sources of the product modules").hasSizeGreaterThan(100);
    }

    @Test
    void noFileOver700Lines() {
        Map<String, Long> tooLong = new TreeMap<>();
        for (Source source : sources) {
            long lines = lines(source.path());
            if (lines > MAX_LINES) {
                tooLong.put(ProductModule.repository().relativize(source.path()).toString(), lines);
            }
        }
        assertThat(tooLong).as("product main files over %d lines", MAX_LINES).isEmpty();
    }

    @Test
    void noPackageOver25Files() {
        Map<String, Integer> counts = new TreeMap<>();
        for (Source source : sources) {
            counts.merge(source.packageName(), 1, Integer::sum);
        }
        counts.values().removeIf(count -> count <= MAX_PACKAGE_FILES);
        assertThat(counts)
                .as("packages with more than %d main files", MAX_PACKAGE_FILES)
                .isEmpty();
    }

    @Test
    void noTwoClassesShareASimpleName() {
        Map<String, List<String>> byName = new TreeMap<>();
        for (Source source : sources) {
            byName.computeIfAbsent(source.simpleName(), k -> new ArrayList<>())
                    .add(source.packageName() + "." + source.simpleName());
        }
        byName.values().removeIf(names -> names.size() == 1);
        assertThat(byName)
                .as("simple names of more than one product main class")
                .isEmpty();
    }

    private static long lines(Path file) {
        try (Stream<String> lines = Files.lines(file)) {
            return lines.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
