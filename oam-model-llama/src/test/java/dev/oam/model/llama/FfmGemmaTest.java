package dev.oam.model.llama;

import dev.oam.testing.RealModel;

/** The FFM engine on Gemma 3 270M, the base model: no template, so its turns come from llama.cpp's Gemma family. */
class FfmGemmaTest extends FfmRealModelSuite {
    FfmGemmaTest() {
        super(RealModel.GEMMA);
    }

    @Override
    String userTurn() {
        return "<start_of_turn>user\n";
    }

    @Override
    String assistantTurn() {
        return "<start_of_turn>model\n";
    }

    @Override
    String endOfTurn() {
        return "<end_of_turn>";
    }
}
