package dev.oam.server;

import dev.oam.testing.RealModel;

/**
 * The official OpenAI clients against the server on Gemma 3 270M, the base model without a template
 * (OAM_TEST_GEMMA_MODEL).
 */
class GemmaServerIT extends RealModelServerSuite {
    GemmaServerIT() {
        super(RealModel.GEMMA);
    }
}
