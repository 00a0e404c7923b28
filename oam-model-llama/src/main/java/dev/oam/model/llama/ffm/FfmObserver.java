package dev.oam.model.llama.ffm;

/**
 * What an FFM engine reports of its decodes, for tests and measurements. Methods run on the process's decode thread and
 * must return quickly; the engine computes nothing extra for {@link #NONE}.
 */
public interface FfmObserver {
    /** Reports nothing: the default. */
    FfmObserver NONE = new FfmObserver() {};

    /**
     * Before each decode: the rows it holds for requests (not the padding or gap rows) and the threads llama.cpp will
     * compute it on, as the context reports them.
     */
    default void decoding(int requestRows, int threads) {}

    /** A copy of a request's first logits row. */
    default void firstLogits(float[] logits) {}

    /** A token of text the grammar forced, fed to the model without sampling. */
    default void forcedToken() {}
}
