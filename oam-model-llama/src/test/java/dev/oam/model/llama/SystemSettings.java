package dev.oam.model.llama;

import dev.oam.core.Environment;
import dev.oam.model.llama.engine.NativeSettings;
import dev.oam.model.llama.ffm.FfmTuning;

/**
 * The settings of the test JVM ({@link LlamaSettings#read} of the process environment), as an entry point reads them.
 */
public final class SystemSettings {
    private SystemSettings() {}

    public static LlamaSettings host() {
        return LlamaSettings.read(Environment.system());
    }

    public static NativeSettings natives() {
        return host().natives();
    }

    public static FfmTuning tuning() {
        return host().tuning();
    }
}
