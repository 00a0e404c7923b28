package dev.oam.model.llama.engine;

/** An {@link Engine} that runs a real model in slots: the JNI and FFM engines (what their tests and the bench read). */
public interface SlotEngine extends Engine {
    /** The settings in force, every default resolved. */
    EngineSettings settings();

    /**
     * The tokens evaluated for {@code prompt}: BOS (a stand-in id in the JNI engine) when the model adds one, then the
     * prompt's.
     */
    int[] promptTokens(String prompt);

    /** The admission queue and slots. */
    SlotTable slotTable();
}
