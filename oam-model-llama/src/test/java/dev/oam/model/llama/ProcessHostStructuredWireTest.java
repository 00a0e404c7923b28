package dev.oam.model.llama;

/**
 * {@link LlamaStructuredWireTest} with the models in a child process ({@code "host": "process"}, {@link ModelHost}).
 */
class ProcessHostStructuredWireTest extends LlamaStructuredWireTest {
    @Override
    LlamaBackend backend() {
        return PROCESS_BACKEND;
    }
}
