/** Test clients, fakes (a scripted OpenAI-compatible server, generated GGUF files) and the contract suites. */
module dev.oam.testing {
    requires transitive dev.oam.bridge;
    requires transitive org.junit.jupiter.api;
    requires transitive org.assertj.core;
    requires jdk.httpserver;
    requires static transitive org.jspecify;

    exports dev.oam.testing;
    exports dev.oam.testing.contract;
    exports dev.oam.testing.gguf;
    exports dev.oam.testing.hub;
    exports dev.oam.testing.openai;
}
