package dev.oam.model.llama.ffm;

import dev.oam.core.Log;
import dev.oam.model.llama.engine.EngineResult;
import dev.oam.model.llama.engine.EngineSettings;
import dev.oam.model.llama.engine.GenerationEvents.Cancelled;
import dev.oam.model.llama.engine.GenerationEvents.Done;
import dev.oam.model.llama.engine.GenerationEvents.Event;
import dev.oam.model.llama.engine.GenerationEvents.Failed;
import dev.oam.model.llama.engine.SlotTable;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.jspecify.annotations.Nullable;

/**
 * One model's continuous batching on the decode thread: its context (one KV sequence, "lane", per slot), the requests
 * admitted to it, and one decode per {@link #step()}. Each decode holds one token of every generating request plus
 * prompt chunks ({@value #CHUNK} tokens at most per request, {@value #STREAM_CHUNK} with streams; in all what fits in
 * the time target by the {@link CostModel}, round-robin) of requests still reading their prompt. Small chunks are what
 * make a cancel during a long prompt answer within one decode, and what keep the next request's wait for the model
 * short.
 *
 * <p>Threads: {@link #submit} and {@link #cancelAll} from any thread; everything else on the decode thread only.
 */
final class Scheduler {
    static final int CHUNK = 64;
    /**
     * With streams, a lane's prompt chunk stays below the 64 query rows at which llama.cpp's CPU attention takes its
     * tiled path, which sums otherwise than the path of fewer rows: a prompt's cells then hold the same numbers however
     * it was cut.
     */
    static final int STREAM_CHUNK = 63;

    /** Part of a decode's plan: {@code take} of {@code g}'s pending tokens. */
    private record Chunk(FfmGeneration g, int take) {}

    private static final Comparator<Chunk> BY_LANE = Comparator.comparingInt(c -> c.g.lease.id());

    private final String name;
    private final LlamaNative api;
    private final EngineSettings settings;
    private final SlotTable slots;
    private final int nVocab;
    /** {@link FfmTuning#pad()} for a model with floating-point weight matrices. */
    private final boolean pad;
    /** A KV stream per lane (vendored API, {@link FfmTuning#streams()}): padding and gap rows go into the lanes. */
    private final boolean streams;

    private final FfmObserver observer;
    private final TokenPicker picker;
    private final CostModel cost;
    private final Batch batch = new Batch();
    private final PaddingRows padding;
    private final ConcurrentLinkedQueue<FfmGeneration> incoming = new ConcurrentLinkedQueue<>();
    private final Set<FfmGeneration> running = ConcurrentHashMap.newKeySet();

    // decode thread only
    private MemorySegment context = MemorySegment.NULL;
    private final List<FfmGeneration> active = new ArrayList<>();
    private final List<Chunk> plan = new ArrayList<>();
    private int cursor;
    /** The context's n_threads_batch now; set only on a change, as llama.cpp logs every setting. */
    private int batchThreads;

    Scheduler(
            String name,
            ModelVocab vocab,
            EngineSettings settings,
            SlotTable slots,
            boolean pad,
            boolean streams,
            FfmTuning tuning,
            FfmObserver observer) {
        this.name = name;
        this.api = vocab.api;
        this.settings = settings;
        this.slots = slots;
        this.nVocab = vocab.size;
        this.pad = pad;
        this.streams = streams;
        this.observer = observer;
        this.picker = new TokenPicker(vocab, settings.contextSize(), tuning, observer);
        this.cost = new CostModel(tuning.decodeTargetMillis());
        this.padding = new PaddingRows(api, batch, settings.slots(), settings.contextSize(), streams);
    }

    String name() {
        return name;
    }

    /** Creates the context of {@code model}. Decode thread. */
    void createContext(MemorySegment model, boolean flashAttention) throws IOException {
        try (Arena local = Arena.ofConfined()) {
            MemorySegment params = streams
                    // a stream per lane, each with a cell more than a lane's context: the padding or gap row
                    ? api.contextParams(
                            local,
                            settings.slots() * (settings.contextSize() + 1),
                            Batch.N_BATCH,
                            settings.slots(),
                            settings.threads(),
                            settings.threadsBatch(),
                            flashAttention,
                            true)
                    // one cache: the lanes, a padding sequence (the last id) and its cell
                    : api.contextParams(
                            local,
                            settings.kvCells() + 1,
                            Batch.N_BATCH,
                            settings.slots() + 1,
                            settings.threads(),
                            settings.threadsBatch(),
                            flashAttention,
                            false);
            MemorySegment created = (MemorySegment) api.initFromModel.invokeExact(model, params);
            if (created.equals(MemorySegment.NULL)) {
                throw new IOException("llama_init_from_model returned NULL (out of memory?)");
            }
            context = created;
            batchThreads = settings.threadsBatch();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Throwable e) {
            throw LlamaNative.failed("llama_init_from_model", e);
        }
    }

    /** Hands {@code g} to the decode thread, which starts it at its next step. Any thread. */
    void submit(FfmGeneration g) {
        running.add(g);
        incoming.add(g);
    }

    /** Cancels every running and queued request. Any thread. */
    void cancelAll() {
        for (FfmGeneration g : running) {
            g.cancel();
        }
    }

    /** One decode for this model, if it has work. */
    boolean step() {
        FfmGeneration arrived;
        while ((arrived = incoming.poll()) != null) {
            start(arrived);
        }
        for (FfmGeneration g : List.copyOf(active)) {
            if (g.cancelRequested()) {
                finish(g, new Cancelled());
            }
        }
        if (active.isEmpty()) {
            return false;
        }
        int n = 0;
        batch.clear();
        plan.clear();
        // One token for each request that is generating (or at its prompt's last token)...
        for (FfmGeneration g : active) {
            if (g.size - g.nPast == 1) {
                plan.add(new Chunk(g, 1));
            }
        }
        // ...then prompt chunks, round-robin from a rotating start so no request waits behind a long prompt. Rows are
        // kept for the padding and, with streams, for a gap row per lane.
        int reserved = 1 + (streams ? settings.slots() - 1 : 0);
        int budget =
                Math.min(cost.prefillBudget(plan.size(), active.size() > 1), Batch.N_BATCH - reserved - plan.size());
        int count = active.size();
        for (int k = 0; k < count && budget > 0; k++) {
            FfmGeneration g = active.get((cursor + k) % count);
            int remaining = g.size - g.nPast;
            if (remaining > 1) {
                int take = Math.min(Math.min(remaining, streams ? STREAM_CHUNK : CHUNK), budget);
                plan.add(new Chunk(g, take));
                budget -= take;
            }
        }
        cursor = count == 0 ? 0 : (cursor + 1) % count;
        if (plan.isEmpty()) {
            return false;
        }
        if (streams) {
            plan.sort(BY_LANE); // llama.cpp puts only lanes with consecutive ids into one micro-batch
        }
        padding.reset();
        int previousLane = -1;
        for (Chunk chunk : plan) {
            if (streams && previousLane >= 0) {
                n = padding.fillGap(context, n, previousLane + 1, chunk.g.lease.id());
            }
            n = batch.add(chunk.g, n, chunk.take);
            previousLane = chunk.g.lease.id();
        }
        if (pad && (n == 1 || batch.outputs(n) == 1) && (settings.slots() > 1 || batch.endsPrompt())) {
            n = padding.pad(n, true);
        } else if (streams && n == 1 && settings.threads() > 1) {
            // llama.cpp's CPU attention splits a lone row's keys between the threads once a stream holds 512 cells, and
            // adds the parts up otherwise than one pass over them: a second row (no output) keeps one pass. On one
            // thread the split is a single part, which adds up as one pass does, so a lone row goes alone.
            n = padding.pad(n, false);
        }
        int requestRows = n - padding.count();
        useThreads(requestRows);
        if (observer
                != FfmObserver
                        .NONE) { // llama.cpp computes a decode of one row on n_threads, of more on n_threads_batch
            observer.decoding(requestRows, n == 1 ? api.nThreads(context) : api.nThreadsBatch(context));
        }
        long decodeStart = System.nanoTime();
        int rc = batch.decode(
                api,
                context,
                n,
                nVocab,
                settings.slots() + (streams ? 0 : 1),
                settings.contextSize() + (streams ? 1 : 0)); // with streams a lane's padding row may be its last
        padding.remove(context);
        if (rc != 0) {
            recover(rc, n);
            return true;
        }
        cost.measured(n, (System.nanoTime() - decodeStart) / 1e6);
        for (int row = 0; row < n; row++) {
            FfmGeneration g = batch.owner(row);
            if (g == null) {
                continue;
            }
            g.nPast += batch.fed(row);
            if (g.nPast == g.size && active.contains(g)) {
                sample(g, row);
            }
        }
        batch.clearOwners(n);
        return true;
    }

    private void sample(FfmGeneration g, int row) {
        boolean done;
        try {
            done = picker.sample(context, g, row);
        } catch (TokenPicker.Failure e) {
            finish(g, new Failed(e.getCause()));
            return;
        }
        if (done) {
            finish(g, null);
        }
    }

    /**
     * Gives the decode {@code threads} when it holds one row of a request's, and {@code threadsBatch} otherwise, as
     * llama.cpp itself does for a one-token decode. The rows added for the decode only (padding, gaps) would otherwise
     * make a lone request's token a decode of several rows, which llama.cpp computes on the batch threads: a lone NPC
     * would take every core where the host asked for {@code threads} (cores - 1 by default, a core left for the game).
     * Which threads compute a product does not change its result.
     */
    private void useThreads(int requestRows) {
        int wanted = requestRows == 1 ? settings.threads() : settings.threadsBatch();
        if (wanted != batchThreads) {
            api.setThreads(context, settings.threads(), wanted);
            batchThreads = wanted;
        }
    }

    /**
     * A failed decode (no room in the KV cache, or an error). On b4916 a failed decode may leave garbage in, or remove
     * cells of, other lanes, so the whole cache is cleared: the requests in the batch fail, the others read their
     * tokens again from the start, and idle lanes forget what they held.
     */
    private void recover(int rc, int n) {
        Log.warning("llama_decode returned " + rc + " for '" + name + "' (" + n + " tokens); clearing the KV cache");
        Set<FfmGeneration> inBatch = new HashSet<>();
        for (int row = 0; row < n; row++) {
            FfmGeneration owner = batch.owner(row);
            if (owner != null) {
                inBatch.add(owner);
            }
        }
        batch.clearOwners(n);
        api.clear(context);
        slots.forgetIdle();
        for (FfmGeneration g : List.copyOf(active)) {
            g.nPast = 0;
            g.cachedLost = true;
            if (inBatch.contains(g)) {
                finish(
                        g,
                        new Failed(new IllegalStateException(
                                "llama_decode failed (" + rc + (rc == 1 ? ": no room in the KV cache" : "") + ")")));
            }
        }
    }

    private void start(FfmGeneration g) {
        active.add(g);
        try {
            if (!api.seqRm(context, g.lease.id(), g.lease.cached(), -1)) {
                throw new IllegalStateException("llama.cpp refused to remove the cells of lane " + g.lease.id());
            }
            g.nPast = g.lease.cached();
        } catch (Throwable e) {
            finish(g, new Failed(e));
        }
    }

    /** Ends {@code g}: frees its lane recording what the KV cache holds, then sends the terminal event. */
    private void finish(FfmGeneration g, @Nullable Event terminal) {
        active.remove(g);
        Grammars.close(g.constraint);
        Event last = terminal;
        if (last == null) {
            g.emit(g.text.finish());
            last = new Done(new EngineResult(
                    g.answer.toString(), g.promptLength, g.cachedLost ? 0 : g.lease.cached(), g.sampled));
        }
        try {
            slots.release(g.lease, Arrays.copyOf(g.tokens, g.nPast));
        } finally {
            running.remove(g);
            g.complete(last);
        }
    }

    /** Writes lane {@code lane}'s state, holding {@code tokens}, to {@code file}: the bytes written. Decode thread. */
    long saveLane(int lane, int[] tokens, java.nio.file.Path file) {
        return api.stateSeqSave(context, file, lane, tokens);
    }

    /**
     * Empties lane {@code lane} and loads {@code file} into it: the tokens its cells now hold, or {@code null} (the
     * lane left empty) when llama.cpp refused the file. Decode thread.
     */
    int @Nullable [] loadLane(int lane, java.nio.file.Path file, int capacity) {
        api.seqRm(context, lane, -1, -1);
        int[] tokens = api.stateSeqLoad(context, file, lane, capacity);
        if (tokens == null) {
            api.seqRm(context, lane, -1, -1);
        }
        return tokens;
    }

    /** Empties lane {@code lane}. Decode thread. */
    void clearLane(int lane) {
        api.seqRm(context, lane, -1, -1);
    }

    /** After a bug in a step: fails every request of this model and clears its cache. */
    void failAll(Throwable error) {
        try {
            api.clear(context);
        } catch (RuntimeException e) {
            Log.error("clearing the KV cache", e);
        }
        for (FfmGeneration g : List.copyOf(active)) {
            g.nPast = 0;
            finish(g, new Failed(error));
        }
        slots.forgetIdle();
    }
}
