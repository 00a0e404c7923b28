package dev.oam.cli;

import dev.oam.testing.RealModel;

/** The real-model suite over stdio on Gemma 3 270M, the base model without a template. */
class StdioGemmaIT extends StdioRealModelSuite {
    StdioGemmaIT() {
        super(RealModel.GEMMA);
    }
}
