package dev.oam.model.llama.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import org.jspecify.annotations.Nullable;

/**
 * One engine's {@code llama_batch} and what each row of it holds: a request's tokens (its owner is recorded on the row
 * that ends its chunk, with the count fed, since sampling happens there) or a row added for the decode only (padding,
 * gaps: {@link PaddingRows}), which has none. Decode thread only.
 */
final class Batch {
    static final int N_BATCH = 512;

    private final Arena arena = Arena.ofShared();
    private final MemorySegment batch;
    private final MemorySegment tokens;
    private final MemorySegment positions;
    private final MemorySegment seqIds;
    private final MemorySegment logits;
    private final @Nullable FfmGeneration[] owner = new FfmGeneration[N_BATCH];
    private final int[] fed = new int[N_BATCH];
    /** Whether the batch being built holds a prompt's last token. */
    private boolean endsPrompt;

    Batch() {
        batch = arena.allocate(LlamaNative.BATCH);
        tokens = arena.allocate(JAVA_INT, N_BATCH);
        positions = arena.allocate(JAVA_INT, N_BATCH);
        MemorySegment seqCounts = arena.allocate(JAVA_INT, N_BATCH);
        MemorySegment seqPointers = arena.allocate(ADDRESS, N_BATCH);
        seqIds = arena.allocate(JAVA_INT, N_BATCH);
        logits = arena.allocate(JAVA_BYTE, N_BATCH);
        for (int i = 0; i < N_BATCH; i++) {
            seqCounts.setAtIndex(JAVA_INT, i, 1);
            seqPointers.setAtIndex(ADDRESS, i, seqIds.asSlice(i * 4L, 4));
        }
        batch.set(ADDRESS, 8, tokens);
        batch.set(ADDRESS, 16, MemorySegment.NULL);
        batch.set(ADDRESS, 24, positions);
        batch.set(ADDRESS, 32, seqCounts);
        batch.set(ADDRESS, 40, seqPointers);
        batch.set(ADDRESS, 48, logits);
    }

    /** Starts building a batch. */
    void clear() {
        endsPrompt = false;
    }

    boolean endsPrompt() {
        return endsPrompt;
    }

    int token(int row) {
        return tokens.getAtIndex(JAVA_INT, row);
    }

    int position(int row) {
        return positions.getAtIndex(JAVA_INT, row);
    }

    int lane(int row) {
        return seqIds.getAtIndex(JAVA_INT, row);
    }

    boolean output(int row) {
        return logits.get(JAVA_BYTE, row) != 0;
    }

    /** Writes row {@code row} with no owner. */
    void put(int row, int token, int pos, int lane, boolean output) {
        tokens.setAtIndex(JAVA_INT, row, token);
        positions.setAtIndex(JAVA_INT, row, pos);
        seqIds.setAtIndex(JAVA_INT, row, lane);
        logits.set(JAVA_BYTE, row, (byte) (output ? 1 : 0));
        owner[row] = null;
    }

    /** Puts {@code take} of {@code g}'s pending tokens at row {@code n}; returns the next free row. */
    int add(FfmGeneration g, int n, int take) {
        for (int i = 0; i < take; i++) {
            int pos = g.nPast + i;
            put(n + i, g.tokens[pos], pos, g.lease.id(), pos == g.size - 1);
            endsPrompt |= pos == g.promptLength - 1;
        }
        owner[n + take - 1] = g;
        fed[n + take - 1] = take;
        return n + take;
    }

    /** How many of the first {@code n} rows ask for logits. */
    int outputs(int n) {
        int count = 0;
        for (int row = 0; row < n; row++) {
            count += logits.get(JAVA_BYTE, row);
        }
        return count;
    }

    /** The request whose chunk ends at {@code row}, or null. */
    @Nullable
    FfmGeneration owner(int row) {
        return owner[row];
    }

    /** The tokens of its request that the chunk ending at {@code row} fed. */
    int fed(int row) {
        return fed[row];
    }

    /** Forgets the owners of the first {@code n} rows. */
    void clearOwners(int n) {
        Arrays.fill(owner, 0, n, null);
    }

    /**
     * Validates the first {@code n} rows (an invalid token or position aborts the JVM inside llama.cpp: tokens in the
     * vocabulary, sequence ids below {@code sequences}, positions below {@code positions} and contiguous per sequence)
     * and decodes them. Returns llama_decode's result.
     */
    int decode(LlamaNative api, MemorySegment context, int n, int nVocab, int sequences, int positions) {
        if (n < 1 || n > N_BATCH) {
            throw new IllegalStateException("batch of " + n + " tokens");
        }
        int[] next = new int[sequences];
        Arrays.fill(next, -1);
        for (int row = 0; row < n; row++) {
            int token = token(row);
            int pos = position(row);
            int lane = lane(row);
            if (token < 0 || token >= nVocab) {
                throw new IllegalStateException("token " + token + " outside the vocabulary of " + nVocab);
            }
            if (lane < 0 || lane >= next.length) {
                throw new IllegalStateException("lane " + lane + " out of range");
            }
            if (next[lane] >= 0 && pos != next[lane] || pos < 0 || pos >= positions) {
                throw new IllegalStateException("position " + pos + " of lane " + lane + " is not contiguous");
            }
            next[lane] = pos + 1;
        }
        batch.set(JAVA_INT, 0, n);
        try {
            return (int) api.decode.invokeExact(context, batch);
        } catch (Throwable e) {
            throw LlamaNative.failed("llama_decode", e);
        }
    }
}
