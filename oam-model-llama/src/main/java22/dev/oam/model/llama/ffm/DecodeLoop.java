package dev.oam.model.llama.ffm;

import dev.oam.core.Log;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The process's one llama.cpp decode thread ({@code oam-llama-decode}, a daemon platform thread). It owns every FFM
 * engine's context and is the only thread that calls {@code llama_decode}, reads logits or touches the KV cache:
 * llama.cpp b4916 corrupts results when two decodes run at once anywhere in the process (a global in its tinyBLAS
 * kernel), so one thread is the lock, and it also makes continuous batching natural.
 *
 * <p>Each turn runs queued tasks (context creation), then one {@link Scheduler#step()} per engine that has work, in
 * rotating order: two models interleave batch by batch, so neither waits for the other's whole prompt. It sleeps when
 * no engine has work, and {@link #wake()} (a new request, a cancel) rouses it.
 */
final class DecodeLoop {
    private static DecodeLoop instance; // guarded by DecodeLoop.class

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition signal = lock.newCondition();
    private final List<Scheduler> engines = new CopyOnWriteArrayList<>();
    private final ConcurrentLinkedQueue<FutureTask<?>> tasks = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private boolean signalled; // guarded by lock
    private int turn; // decode thread only

    private DecodeLoop() {
        thread = Thread.ofPlatform().daemon().name("oam-llama-decode").unstarted(this::run);
        thread.start();
    }

    static synchronized DecodeLoop get() {
        if (instance == null) {
            instance = new DecodeLoop();
        }
        return instance;
    }

    void register(Scheduler engine) {
        engines.add(engine);
        wake();
    }

    boolean onLoopThread() {
        return Thread.currentThread() == thread;
    }

    /** Runs {@code task} on the decode thread and waits for it; runs it at once when already there. */
    <T> T call(Callable<T> task) throws Exception {
        if (onLoopThread()) {
            return task.call();
        }
        FutureTask<T> future = new FutureTask<>(task);
        tasks.add(future);
        wake();
        try {
            return future.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception cause) {
                throw cause;
            }
            throw e;
        }
    }

    void wake() {
        lock.lock();
        try {
            signalled = true;
            signal.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void run() {
        while (true) {
            try {
                FutureTask<?> task;
                while ((task = tasks.poll()) != null) {
                    task.run();
                }
                boolean worked = false;
                int count = engines.size();
                for (int i = 0; i < count; i++) {
                    Scheduler engine = engines.get((turn + i) % count);
                    try {
                        worked |= engine.step();
                    } catch (Throwable e) { // a bug in a step must not stop every model of the process
                        Log.error("llama decode step failed for '" + engine.name() + "'", e);
                        engine.failAll(e);
                    }
                }
                turn++;
                if (!worked) {
                    lock.lock();
                    try {
                        while (!signalled && tasks.isEmpty()) {
                            signal.await();
                        }
                        signalled = false;
                    } finally {
                        lock.unlock();
                    }
                }
            } catch (InterruptedException e) {
                Log.debug("llama decode thread interrupted; continuing");
            } catch (Throwable e) {
                Log.error("llama decode loop", e);
            }
        }
    }
}
