package dev.oam.server;

import dev.oam.testing.RealModel;

/**
 * The official OpenAI clients against the server on SmolLM2-135M-Instruct with its own ChatML template
 * (OAM_TEST_SMOLLM2_MODEL).
 */
class SmolLM2ServerIT extends RealModelServerSuite {
    SmolLM2ServerIT() {
        super(RealModel.SMOLLM2);
    }
}
