package dev.oam.model.llama.engine;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.Set;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class TokenSamplerTest {
    private static final float[] LOGITS = {1f, -3f, 4f, 4f, -0.5f, 2f, -7f, 0f};

    @Test
    void greedyIsTheArgmaxWithTiesToTheLowestIdAndRespectsTheMask() {
        assertThat(TokenSampler.argmax(LOGITS, LOGITS.length, null)).isEqualTo(2);
        long[] mask = {1L << 5 | 1L << 6};
        assertThat(TokenSampler.argmax(LOGITS, LOGITS.length, mask)).isEqualTo(5);
        assertThat(TokenSampler.argmax(LOGITS, LOGITS.length, new long[1])).isEqualTo(-1);
    }

    @Test
    void topKOneAndATinyTopPAreGreedyAndASeedRepeats() {
        TokenSampler sampler = new TokenSampler();
        float[] many = new float[300];
        for (int i = 0; i < many.length; i++) {
            many[i] = (float) Math.sin(i * 0.37) * 3 - (i % 7 == 0 ? 2 : 0);
        }
        int best = TokenSampler.argmax(many, many.length, null);
        assertThat(sampler.sample(many, many.length, null, 1.5, 1, 1, new SplittableRandom(1)))
                .isEqualTo(best);
        assertThat(sampler.sample(many, many.length, null, 1.5, 0, 1e-6, new SplittableRandom(1)))
                .isEqualTo(best);
        int first = sampler.sample(many, many.length, null, 1.0, 0, 1, new SplittableRandom(9));
        assertThat(sampler.sample(many, many.length, null, 1.0, 0, 1, new SplittableRandom(9)))
                .isEqualTo(first);
        Set<Integer> seen = new HashSet<>();
        SplittableRandom random = new SplittableRandom(3);
        for (int i = 0; i < 200; i++) {
            seen.add(sampler.sample(many, many.length, null, 1.0, 0, 1, random));
        }
        assertThat(seen).hasSizeGreaterThan(5);
        long[] mask = new long[5];
        mask[0] = 1L << 7 | 1L << 40;
        for (int i = 0; i < 50; i++) {
            assertThat(sampler.sample(many, many.length, mask, 2.0, 0, 1, random))
                    .isIn(7, 40);
        }
    }

    @Test
    void negativeLogitsSortBelowPositiveOnes() {
        TokenSampler sampler = new TokenSampler();
        float[] logits = new float[100];
        for (int i = 0; i < logits.length; i++) {
            logits[i] = -5f - i * 0.01f;
        }
        logits[77] = 0.5f;
        assertThat(sampler.sample(logits, logits.length, null, 1.0, 0, 1e-9, new SplittableRandom(4)))
                .isEqualTo(77);
        assertThat(sampler.sample(logits, logits.length, null, 1.0, 1, 1, new SplittableRandom(4)))
                .isEqualTo(77);
    }

    @Test
    void utf8PiecesNeverSplitACharacter() {
        byte[] all = "a😀é€b".getBytes(StandardCharsets.UTF_8);
        Utf8Pieces pieces = new Utf8Pieces();
        StringBuilder out = new StringBuilder();
        for (byte b : all) {
            String delta = pieces.add(new byte[] {b});
            assertThat(delta).doesNotContain("\uFFFD");
            out.append(delta);
        }
        out.append(pieces.finish());
        assertThat(out.toString()).isEqualTo("a😀é€b");
        Utf8Pieces broken = new Utf8Pieces();
        assertThat(broken.add(new byte[] {'x', (byte) 0xF0, (byte) 0x9F})).isEqualTo("x");
        assertThat(broken.finish())
                .as("an unfinished character is dropped, never shown as U+FFFD")
                .isEmpty();
        Utf8Pieces lone = new Utf8Pieces();
        assertThat(lone.add(new byte[] {'a', (byte) 0x80, 'b'}) + lone.finish()).isEqualTo("ab");
        assertThat(lone.add(new byte[] {(byte) 0xC0, (byte) 0xAF, 'c'}) + lone.finish())
                .isEqualTo("c");
    }
}
