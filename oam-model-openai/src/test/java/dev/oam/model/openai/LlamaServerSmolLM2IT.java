package dev.oam.model.openai;

import dev.oam.testing.RealModel;

/**
 * The OpenAI wire tests against a real llama-server on SmolLM2-135M-Instruct, with the file's own ChatML template
 * ({@code --jinja} alone).
 */
class LlamaServerSmolLM2IT extends LlamaServerSuite {
    LlamaServerSmolLM2IT() {
        super(RealModel.SMOLLM2);
    }
}
