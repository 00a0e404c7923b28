/**
 * GGUF models run in-process by llama.cpp (de.kherud:llama): serves {@code "type": "llama"} and {@code --model
 * PATH.gguf}. Hosts reach it through {@link dev.oam.core.model.ModelBackend}; its packages are exported to the
 * benchmarks only.
 */
// requires: two libraries without a module descriptor; module: the benchmarks the packages are exported to are built
// later
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic", "module"})
module dev.oam.model.llama {
    requires dev.oam.core;
    requires llama; // de.kherud:llama has no module descriptor: its automatic name comes from the jar's file name
    requires jinjava; // com.hubspot.jinjava:jinjava has no module descriptor nor Automatic-Module-Name: named from its
    // jar
    requires java.desktop; // java.beans.FeatureDescriptor in Jinjava's EL resolver API (ChatTemplate.PythonMethods)
    requires static org.jspecify;

    exports dev.oam.model.llama to
            dev.oam.bench;
    exports dev.oam.model.llama.engine to
            dev.oam.bench;
    exports dev.oam.model.llama.gguf to
            dev.oam.bench;
    exports dev.oam.model.llama.grammar to
            dev.oam.bench;
    exports dev.oam.model.llama.jni to
            dev.oam.bench;
    exports dev.oam.model.llama.prompt to
            dev.oam.bench;

    provides dev.oam.core.model.ModelBackend with
            dev.oam.model.llama.LlamaBackend;
}
