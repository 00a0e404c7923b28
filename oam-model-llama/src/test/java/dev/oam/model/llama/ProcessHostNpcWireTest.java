package dev.oam.model.llama;

/** {@link LlamaNpcWireTest} with the models in a child process ({@code "host": "process"}, {@link ModelHost}). */
class ProcessHostNpcWireTest extends LlamaNpcWireTest {
    @Override
    LlamaBackend backend() {
        return PROCESS_BACKEND;
    }
}
