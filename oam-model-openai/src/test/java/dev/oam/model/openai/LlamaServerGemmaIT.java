package dev.oam.model.openai;

import dev.oam.testing.RealModel;

/**
 * The OpenAI wire tests against a real llama-server on Gemma 3 270M, given Gemma's turns as a template (the file has
 * none).
 */
class LlamaServerGemmaIT extends LlamaServerSuite {
    LlamaServerGemmaIT() {
        super(RealModel.GEMMA);
    }
}
