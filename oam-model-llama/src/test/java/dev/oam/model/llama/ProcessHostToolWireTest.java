package dev.oam.model.llama;

/** {@link LlamaToolWireTest} with the models in a child process ({@code "host": "process"}, {@link ModelHost}). */
class ProcessHostToolWireTest extends LlamaToolWireTest {
    @Override
    LlamaBackend backend() {
        return PROCESS_BACKEND;
    }
}
