package dev.oam.model.llama;

import dev.oam.testing.RealModel;

/** The FFM engine on SmolLM2-135M-Instruct with its own ChatML template and byte-level BPE vocabulary. */
class FfmSmolLM2Test extends FfmRealModelSuite {
    FfmSmolLM2Test() {
        super(RealModel.SMOLLM2);
    }

    @Override
    String userTurn() {
        return "<|im_start|>user\n";
    }

    @Override
    String assistantTurn() {
        return "<|im_start|>assistant\n";
    }

    @Override
    String endOfTurn() {
        return "<|im_end|>";
    }
}
