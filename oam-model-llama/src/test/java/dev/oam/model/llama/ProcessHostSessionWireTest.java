package dev.oam.model.llama;

/** {@link LlamaSessionWireTest} with the models in a child process ({@code "host": "process"}, {@link ModelHost}). */
class ProcessHostSessionWireTest extends LlamaSessionWireTest {
    @Override
    LlamaBackend backend() {
        return PROCESS_BACKEND;
    }
}
