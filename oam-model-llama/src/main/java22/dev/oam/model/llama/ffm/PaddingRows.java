package dev.oam.model.llama.ffm;

import java.lang.foreign.MemorySegment;

/**
 * The rows a decode holds only for itself, so llama.cpp computes its requests' rows the same whatever else decodes with
 * them: the padding row (a one-row decode, or one with a single output, gets a second row, {@link FfmTuning#pad()})
 * and, with a KV stream per lane, gap rows for the lanes between two lanes in the batch. Their logits are never read
 * and their cells are removed after the decode ({@link #remove}). Decode thread only.
 */
final class PaddingRows {
    private final LlamaNative api;
    private final Batch batch;
    private final int lanes;
    private final int contextSize;
    private final boolean streams;
    private final int[] lane = new int[Batch.N_BATCH];
    private final int[] pos = new int[Batch.N_BATCH];
    private int count;

    PaddingRows(LlamaNative api, Batch batch, int lanes, int contextSize, boolean streams) {
        this.api = api;
        this.batch = batch;
        this.lanes = lanes;
        this.contextSize = contextSize;
        this.streams = streams;
    }

    /** Starts a batch with no padding or gap rows. */
    void reset() {
        count = 0;
    }

    /** How many rows of the batch being built are padding or gaps. */
    int count() {
        return count;
    }

    /**
     * With streams: a row for each lane in [{@code from}, {@code to}) (lanes not in this decode), at the lane's next
     * position, without logits, so the lanes around it share one micro-batch. A lane whose stream is full gets none
     * (the batch is then cut there). Returns the next free row.
     */
    int fillGap(MemorySegment context, int n, int from, int to) {
        for (int l = from; l < to; l++) {
            int p = api.seqPosMax(context, l) + 1;
            if (p > contextSize) {
                continue;
            }
            n = add(n, l, p, false);
        }
        return n;
    }

    /**
     * Adds the padding row at row {@code n}, with logits when {@code output}, so the batch has two rows and, when any,
     * two outputs. In one shared cache it is row 0's token at position 0 of the padding sequence (the last id, no
     * lane's). With streams it goes into the lane of the output row (or of the last row), at the position after it, so
     * llama.cpp computes the two in one micro-batch (a row of a sequence of its own could land in a micro-batch of its
     * own); the lane's rows before it do not see it. Returns the new row count.
     */
    int pad(int n, boolean output) {
        int l = lanes;
        int p = 0;
        if (streams) {
            int host = n - 1; // the output row's lane (an output ends its lane's rows), else the last row's
            for (int row = 0; row < n; row++) {
                if (batch.output(row)) {
                    host = row;
                }
            }
            l = batch.lane(host);
            p = batch.position(host) + 1;
        }
        return add(n, l, p, output);
    }

    /**
     * Puts row 0's token at row {@code n}, at {@code p} of lane {@code l}, with no owner. Returns the next free row.
     */
    private int add(int n, int l, int p, boolean output) {
        batch.put(n, batch.token(0), p, l, output);
        lane[count] = l;
        pos[count++] = p;
        return n + 1;
    }

    /** Frees the cells of the rows added for the decode only: the padding sequence and the gaps hold nothing after. */
    void remove(MemorySegment context) {
        for (int i = 0; i < count; i++) {
            if (!api.seqRm(context, lane[i], pos[i], -1)) {
                throw new IllegalStateException(
                        "llama.cpp refused to remove the padding or gap row of sequence " + lane[i]);
            }
        }
        count = 0;
    }
}
