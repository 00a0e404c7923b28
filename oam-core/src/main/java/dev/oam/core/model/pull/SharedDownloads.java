package dev.oam.core.model.pull;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * Downloads shared by every caller in this process that pulls the same file: the first caller's pull starts it, the
 * others join it and get its progress, and the last caller to stop waiting stops it.
 */
final class SharedDownloads {
    private static final Object SHARED_LOCK = new Object();
    private static final Map<Path, Shared> SHARED = new HashMap<>(); // guarded by SHARED_LOCK

    private SharedDownloads() {}

    @FunctionalInterface
    interface Work {
        Path run(Job job) throws PullException, InterruptedException;
    }

    /** One download and the callers waiting for it. */
    private static final class Shared {
        final CompletableFuture<Path> result = new CompletableFuture<>();
        final List<PullListener> listeners = new CopyOnWriteArrayList<>();
        int waiters; // guarded by SHARED_LOCK

        @Nullable
        Job job; // guarded by SHARED_LOCK

        @Nullable
        Thread worker; // guarded by SHARED_LOCK
    }

    /** The running download's state, for cancelling it. */
    static final class Job {
        final Shared shared;
        volatile @Nullable Transfer transfer;
        volatile boolean cancelled;
        volatile long lastDone = -1;
        volatile long lastTotal = -1;
        private long reported = -1;

        Job(Shared shared) {
            this.shared = shared;
        }

        /** Tells every waiting caller, about every half per cent. Download thread only. */
        void progress(long done, long total) {
            long step = total > 0 ? Math.max(1, total / 200) : 1 << 20;
            if (reported >= 0 && done < total && done - reported < step && done > reported) {
                return;
            }
            reported = done;
            lastDone = done;
            lastTotal = total;
            for (PullListener listener : shared.listeners) {
                try {
                    listener.progress(done, total);
                } catch (RuntimeException e) {
                    dev.oam.core.Log.warning("a pull progress listener failed: " + e);
                }
            }
        }

        void cancel() {
            cancelled = true;
            Transfer t = transfer;
            if (t != null) {
                t.cancel();
            }
        }
    }

    /**
     * Runs {@code work} for {@code target} on a virtual thread {@code oam-pull}, or joins the one already running, and
     * waits for its result; an interrupt makes this caller leave (the last to leave stops the download).
     */
    static Path pull(Path target, PullListener listener, Work work) throws PullException, InterruptedException {
        Shared shared;
        while (true) {
            Shared dying;
            synchronized (SHARED_LOCK) {
                shared = SHARED.get(target);
                dying = shared != null && shared.job != null && shared.job.cancelled ? shared : null;
                if (dying == null) {
                    if (shared == null) {
                        shared = start(target, work);
                    }
                    shared.listeners.add(listener);
                    shared.waiters++;
                    Job job = shared.job;
                    if (job != null && job.lastDone >= 0) {
                        listener.progress(job.lastDone, job.lastTotal); // a joining caller sees where the download is
                    }
                    if (shared.worker != null && shared.worker.getState() == Thread.State.NEW) {
                        shared.worker.start();
                    }
                    break;
                }
            }
            try {
                dying.result.get(); // a cancelled download is still stopping: start afresh once it has
            } catch (ExecutionException e) {
                // expected: it was cancelled
            }
        }
        try {
            return shared.result.get();
        } catch (InterruptedException e) {
            leave(shared, listener);
            throw e;
        } catch (ExecutionException e) {
            if (e.getCause() instanceof PullException pull) {
                throw new PullException(pull.reason(), pull.getMessage(), pull);
            }
            throw new PullException(PullException.Reason.IO, "the pull failed: " + e.getCause(), e.getCause());
        } finally {
            synchronized (SHARED_LOCK) {
                shared.listeners.remove(listener);
            }
        }
    }

    /** A new download of {@code target}, registered and not yet started. Caller holds SHARED_LOCK. */
    private static Shared start(Path target, Work work) {
        Shared fresh = new Shared();
        Job job = new Job(fresh);
        fresh.job = job;
        SHARED.put(target, fresh);
        fresh.worker = Thread.ofVirtual().name("oam-pull").unstarted(() -> {
            Path path = null;
            PullException failure = null;
            try {
                path = work.run(job);
            } catch (PullException e) {
                failure = e;
            } catch (InterruptedException e) {
                failure = new PullException(PullException.Reason.CANCELLED, "the pull was cancelled");
            } catch (RuntimeException | Error e) {
                failure = new PullException(PullException.Reason.IO, "the pull failed: " + e, e);
            }
            synchronized (SHARED_LOCK) {
                SHARED.remove(target, fresh); // before the callers hear: a new pull never joins a finished download
            }
            if (failure != null) {
                fresh.result.completeExceptionally(failure);
            } else {
                fresh.result.complete(path);
            }
        });
        return fresh;
    }

    /** A caller stops waiting; the last one stops the download. */
    private static void leave(Shared shared, PullListener listener) {
        synchronized (SHARED_LOCK) {
            shared.listeners.remove(listener);
            if (--shared.waiters == 0 && shared.job != null) {
                shared.job.cancel();
                if (shared.worker != null) {
                    shared.worker.interrupt();
                }
            }
        }
    }
}
