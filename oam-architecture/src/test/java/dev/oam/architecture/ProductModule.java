package dev.oam.architecture;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The product modules and the direction of their dependencies (docs/ARCHITECTURE.md, "Modules"): each names the modules
 * its pom depends on in compile scope. {@code bench} (benchmarks), {@code oam-fuzz} and this module (tests only) are no
 * product.
 */
enum ProductModule {
    CORE("oam-core", "dev.oam.core"),
    GAME("oam-game", "dev.oam.game", CORE),
    BRIDGE("oam-bridge", "dev.oam.bridge", CORE, GAME),
    TESTING("oam-testing", "dev.oam.testing", BRIDGE),
    OPENAI("oam-model-openai", "dev.oam.model.openai", CORE),
    LLAMA("oam-model-llama", "dev.oam.model.llama", CORE),
    SERVER("oam-server", "dev.oam.server", CORE),
    CLI("oam-cli", "dev.oam.cli", BRIDGE, SERVER, OPENAI, LLAMA),
    FFI("oam-ffi", "dev.oam.ffi", BRIDGE, CLI);

    final String folder;
    final String rootPackage;
    private final List<ProductModule> dependencies;

    ProductModule(String folder, String rootPackage, ProductModule... dependencies) {
        this.folder = folder;
        this.rootPackage = rootPackage;
        this.dependencies = List.of(dependencies);
    }

    /** This module and every module it depends on, directly or through another. */
    Set<ProductModule> reads() {
        Set<ProductModule> reads = EnumSet.of(this);
        for (ProductModule dependency : dependencies) {
            reads.addAll(dependency.reads());
        }
        return reads;
    }

    /** {@code rootPackage..}, ArchUnit's pattern for the module's packages. */
    String packages() {
        return rootPackage + "..";
    }

    /** The repository's root: the build passes it ({@code oam.architecture.root}), else the module's parent. */
    static Path repository() {
        String given = System.getProperty("oam.architecture.root");
        return (given != null ? Path.of(given) : Path.of("").toAbsolutePath().getParent())
                .toAbsolutePath()
                .normalize();
    }

    Path classes() {
        return repository().resolve(folder).resolve("target/classes");
    }

    Path mainSources() {
        return repository().resolve(folder).resolve("src/main");
    }
}
