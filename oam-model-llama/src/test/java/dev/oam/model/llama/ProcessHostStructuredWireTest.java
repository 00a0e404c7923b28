package dev.oam.model.llama;

import dev.oam.model.llama.host.ModelHost;

/**
 * {@link LlamaStructuredWireTest} with the models in a child process ({@code "host": "process"}, {@link ModelHost}).
 */
class ProcessHostStructuredWireTest extends LlamaStructuredWireTest {
    @Override
    LlamaBackend backend() {
        return PROCESS_BACKEND;
    }
}
