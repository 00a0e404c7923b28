package dev.oam.model.llama.ffm;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.oam.core.Log;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.ArrayList;
import java.util.List;

/**
 * llama.cpp's log, forwarded to {@link Log}; the lines that tell where a model's layers went are kept for the engine
 * that just loaded it ({@link #takePlacement()}).
 */
@SuppressWarnings(
        "restricted") // calling llama.cpp through FFM is this class's job; oam.jar and bin/oam enable native access
final class NativeLog {
    /** ggml_log_level values. */
    private static final int LOG_DEBUG = 1;

    private static final int LOG_INFO = 2;
    private static final int LOG_WARN = 3;
    private static final int LOG_ERROR = 4;
    private static final int LOG_CONT = 5;

    private NativeLog() {}

    /** The callback {@code llama_log_set} takes: an upcall to {@link #log}, for the life of the process. */
    static MemorySegment callback(Linker linker) throws ReflectiveOperationException {
        MethodHandle forward = MethodHandles.lookup()
                .findStatic(
                        NativeLog.class,
                        "log",
                        MethodType.methodType(void.class, int.class, MemorySegment.class, MemorySegment.class));
        return linker.upcallStub(forward, FunctionDescriptor.ofVoid(JAVA_INT, ADDRESS, ADDRESS), Arena.global());
    }

    /**
     * llama.cpp's log callback: forwards to {@link Log} (errors as warnings, the rest at debug). Runs on whichever
     * thread logs; must never throw (an exception escaping an upcall ends the JVM), so it catches everything.
     */
    @SuppressWarnings("unused") // the upcall target
    private static void log(int level, MemorySegment text, MemorySegment userData) {
        try {
            boolean loud = level == LOG_ERROR || level == LOG_WARN;
            if (!loud && level != LOG_INFO && !Log.enabled(Log.Level.DEBUG)) {
                return;
            }
            String message = text.equals(MemorySegment.NULL)
                    ? ""
                    : text.reinterpret(64 * 1024).getString(0).strip();
            if (message.isEmpty()) {
                return;
            }
            if (level == LOG_INFO && isPlacement(message)) {
                // where a model's layers went: the device, its free memory, the offloaded layers (FfmEngine reports
                // them)
                Log.info("llama.cpp: " + message);
                synchronized (PLACEMENT) {
                    if (PLACEMENT.size() < 16) {
                        PLACEMENT.add(message);
                    }
                }
                return;
            }
            if (!loud && !Log.enabled(Log.Level.DEBUG)) {
                return;
            }
            if (level == LOG_ERROR) {
                Log.warning("llama.cpp: " + message);
            } else if (level == LOG_WARN) {
                Log.info("llama.cpp: " + message);
            } else if (level == LOG_DEBUG || level == LOG_INFO || level == LOG_CONT) {
                Log.debug("llama.cpp: " + message);
            }
        } catch (Throwable ignored) {
            // nothing may escape an upcall
        }
    }

    /** llama.cpp's load lines about devices and offloaded layers since the last {@link #takePlacement()}. */
    private static final List<String> PLACEMENT = new ArrayList<>(); // guarded by itself

    static boolean isPlacement(String message) {
        return message.contains("using device ")
                || message.contains("offloaded ")
                || message.contains("ggml_vulkan: ")
                || message.contains("CUDA0")
                || message.contains("Metal");
    }

    /** The placement lines logged since the last call (the engine takes them right after loading a model). */
    static List<String> takePlacement() {
        synchronized (PLACEMENT) {
            List<String> lines = List.copyOf(PLACEMENT);
            PLACEMENT.clear();
            return lines;
        }
    }
}
