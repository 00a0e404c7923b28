package dev.oam.model.llama;

import dev.oam.model.llama.ffm.FfmObserver;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * An {@link FfmObserver} whose parts a test switches on around what it watches and off after (the FFM engines of
 * {@link TinyEngines} share {@link TinyEngines#PROBES}), and which counts forced tokens.
 */
final class ProbeObserver implements FfmObserver {
    volatile @Nullable BiConsumer<Integer, Integer> decoding;
    volatile @Nullable Consumer<float[]> firstLogits;
    final AtomicLong forcedTokens = new AtomicLong();

    @Override
    public void decoding(int requestRows, int threads) {
        BiConsumer<Integer, Integer> probe = decoding;
        if (probe != null) {
            probe.accept(requestRows, threads);
        }
    }

    @Override
    public void firstLogits(float[] logits) {
        Consumer<float[]> probe = firstLogits;
        if (probe != null) {
            probe.accept(logits);
        }
    }

    @Override
    public void forcedToken() {
        forcedTokens.incrementAndGet();
    }
}
