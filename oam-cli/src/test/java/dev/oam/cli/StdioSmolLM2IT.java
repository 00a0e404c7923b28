package dev.oam.cli;

import dev.oam.testing.RealModel;

/** The real-model suite over stdio on SmolLM2-135M-Instruct with its own ChatML template. */
class StdioSmolLM2IT extends StdioRealModelSuite {
    StdioSmolLM2IT() {
        super(RealModel.SMOLLM2);
    }
}
