/**
 * The agent loop, tools, schemas, transcripts and the model SPI ({@code dev.oam.core.model}:
 * {@link dev.oam.core.model.LanguageModel} for one inference step, {@link dev.oam.core.model.ModelBackend} for a
 * backend found through {@link java.util.ServiceLoader}). Knows nothing of JSON-RPC.
 */
@SuppressWarnings("module") // the modules the internal packages are exported to are built later
module dev.oam.core {
    requires transitive com.fasterxml.jackson.databind;
    requires static transitive org.jspecify;
    requires java.net.http; // model downloads (dev.oam.core.model.pull)

    exports dev.oam.core;
    exports dev.oam.core.agent;
    exports dev.oam.core.json;
    exports dev.oam.core.model;
    exports dev.oam.core.model.pull;
    exports dev.oam.core.schema;
    exports dev.oam.core.tool;
    exports dev.oam.core.transcript;
    // POSIX process helpers: internal, for the transports and the llama backend only.
    exports dev.oam.core.os to
            dev.oam.cli,
            dev.oam.model.llama;

    uses dev.oam.core.model.ModelBackend;
}
