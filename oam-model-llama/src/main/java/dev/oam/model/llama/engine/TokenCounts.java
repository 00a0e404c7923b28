package dev.oam.model.llama.engine;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.ToIntFunction;

/**
 * An engine's cache of token counts: prompts are assembled from the same pieces step after step (instructions, tool
 * lists, earlier turns), each counted to fit the context. The {@value #ENTRIES} texts counted last, up to
 * {@value #MAX_CHARS} characters each. Thread-safe.
 */
public final class TokenCounts {
    private static final int ENTRIES = 512;
    private static final int MAX_CHARS = 16 * 1024;

    private final Map<String, Integer> counts = new LinkedHashMap<>(64, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Integer> eldest) {
            return size() > ENTRIES;
        }
    }; // guarded by itself

    /** The count of {@code text}, from the cache or from {@code tokenizer} (run outside the lock). */
    public int count(String text, ToIntFunction<String> tokenizer) {
        boolean cacheable = text.length() <= MAX_CHARS;
        if (cacheable) {
            synchronized (counts) {
                Integer known = counts.get(text);
                if (known != null) {
                    return known;
                }
            }
        }
        int count = tokenizer.applyAsInt(text);
        if (cacheable) {
            synchronized (counts) {
                counts.put(text, count);
            }
        }
        return count;
    }
}
