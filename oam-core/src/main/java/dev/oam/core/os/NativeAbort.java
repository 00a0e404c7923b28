package dev.oam.core.os;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Makes a native abort (SIGABRT: a failed {@code GGML_ASSERT} in llama.cpp, an uncaught C++ exception reaching
 * {@code std::terminate}) leave a trace a game can find, in processes that own their whole life: {@code oam stdio} and
 * the child model host.
 *
 * <p>HotSpot writes its crash report ({@code hs_err_pid<pid>.log}, where {@code -XX:ErrorFile} says) for the signals it
 * handles (SIGSEGV, SIGBUS, …), not for an abort: the process just dies with exit code 134 and only ggml's one line on
 * stderr. {@link #install} sets a SIGABRT handler (an FFM upcall, so pure Java) that, on the aborting thread:
 *
 * <ol>
 *   <li>puts SIGABRT back to its default action (so the JVM's own abort after its report ends the process);
 *   <li>writes one line to file descriptor 2 saying what happened, which thread, the exit code and where the report
 *       goes;
 *   <li>writes to address 0, a deliberate SIGSEGV, so that the JVM writes its crash report (its "problematic frame" is
 *       then this class; the aborting native frames and the Java caller are below it) and then aborts: exit code 134,
 *       as for any native crash.
 * </ol>
 *
 * When the JVM itself aborts after reporting some other crash, the handler sees that report's file and does nothing, so
 * that abort ends the process as before.
 *
 * <p>Like {@link Posix} this class never names an FFM type (we compile for release 21). It needs JDK 22+ on Linux or
 * macOS; elsewhere {@link #install} says why it did nothing. Never install it in a host's JVM (a game, the C ABI): a
 * process-wide signal handler is the host's business.
 */
public final class NativeAbort {
    /** The exit code of a process that a native abort or crash ended (128 + SIGABRT). */
    public static final int EXIT_CODE = 134;

    private static final int SIGABRT = 6; // Linux and macOS alike

    private static @Nullable Handles handles; // set once, by install
    private static volatile boolean fired;

    private NativeAbort() {}

    /**
     * Installs the handler once per process; later calls do nothing. Returns a line for a debug log: what was done, or
     * why nothing was.
     *
     * @param who what this process is, for the message ({@code "oam stdio"})
     */
    public static synchronized String install(String who) {
        if (handles != null) {
            return "native abort handler already installed";
        }
        if (!Posix.isAvailable()) {
            return "no native abort handler (" + Posix.unavailableReason() + ")";
        }
        try {
            Handles h = Handles.bind(who, reportFile());
            handles = h;
            Object previous = h.signal.invoke(SIGABRT, h.stub);
            return "native abort handler installed (crash report: " + h.report + ", previous handler "
                    + h.address.invoke(previous) + ")";
        } catch (Throwable e) {
            handles = null;
            return "no native abort handler (" + e + ")";
        }
    }

    /**
     * Where HotSpot writes its report: {@code -XX:ErrorFile} with {@code %p} replaced, else {@code hs_err_pid<pid>.log}
     * in the working directory (HotSpot's default).
     */
    static Path reportFile() {
        long pid = ProcessHandle.current().pid();
        String pattern = "hs_err_pid%p.log";
        Optional<String[]> arguments = ProcessHandle.current().info().arguments();
        for (String argument : arguments.orElse(new String[0])) {
            if (argument.startsWith("-XX:ErrorFile=")) {
                pattern = argument.substring("-XX:ErrorFile=".length());
            }
        }
        return Path.of(pattern.replace("%p", Long.toString(pid)).replace("%%", "%"))
                .toAbsolutePath();
    }

    /** The SIGABRT handler; runs on the aborting thread. Must never throw (an upcall that throws kills the JVM). */
    @SuppressWarnings("unused") // called from native code through the upcall stub
    private static void onSignal(int signal) {
        Handles h = handles;
        if (h == null || fired) {
            return;
        }
        fired = true;
        try {
            h.signal.invoke(SIGABRT, h.defaultAction);
            if (Files.exists(h.report)) {
                return; // the JVM reported a crash of its own and is aborting now
            }
            String line = "oam: native code aborted " + h.who
                    + " (SIGABRT, e.g. a failed GGML_ASSERT in llama.cpp: see the line above)"
                    + " on thread '" + Thread.currentThread().getName() + "'. The process exits with code " + EXIT_CODE
                    + "; the JVM's crash report goes to " + h.report
                    + " (its SIGSEGV in dev.oam.core.os.NativeAbort is deliberate:"
                    + " the JVM writes no report for an abort).\n";
            Posix.write(2, line.getBytes(StandardCharsets.UTF_8));
            h.crash.invoke();
        } catch (Throwable e) {
            // Returning lets abort(3) end the process with SIGABRT as it would have without us.
        }
    }

    /** The FFM pieces, bound before they are needed (nothing is looked up inside the signal handler). */
    private static final class Handles {
        final String who;
        final Path report;
        final MethodHandle signal; // (int, MemorySegment) -> MemorySegment
        final MethodHandle address; // MemorySegment -> long
        final MethodHandle crash; // () -> void: writes a byte at address 0
        final Object stub;
        final Object defaultAction; // MemorySegment.NULL, SIG_DFL

        private Handles(
                String who,
                Path report,
                MethodHandle signal,
                MethodHandle address,
                MethodHandle crash,
                Object stub,
                Object defaultAction) {
            this.who = who;
            this.report = report;
            this.signal = signal;
            this.address = address;
            this.crash = crash;
            this.stub = stub;
            this.defaultAction = defaultAction;
        }

        static Handles bind(String who, Path report) throws Throwable {
            Class<?> linkerClass = Class.forName("java.lang.foreign.Linker");
            Class<?> lookupClass = Class.forName("java.lang.foreign.SymbolLookup");
            Class<?> layoutClass = Class.forName("java.lang.foreign.MemoryLayout");
            Class<?> valueLayout = Class.forName("java.lang.foreign.ValueLayout");
            Class<?> byteLayout = Class.forName("java.lang.foreign.ValueLayout$OfByte");
            Class<?> descriptorClass = Class.forName("java.lang.foreign.FunctionDescriptor");
            Class<?> segmentClass = Class.forName("java.lang.foreign.MemorySegment");
            Class<?> optionClass = Class.forName("java.lang.foreign.Linker$Option");
            Class<?> arenaClass = Class.forName("java.lang.foreign.Arena");

            Object linker = linkerClass.getMethod("nativeLinker").invoke(null);
            Object libc = linkerClass.getMethod("defaultLookup").invoke(linker);
            Object cInt = valueLayout.getField("JAVA_INT").get(null);
            Object cByte = valueLayout.getField("JAVA_BYTE").get(null);
            Object pointer = valueLayout.getField("ADDRESS").get(null);
            Object noOptions = Array.newInstance(optionClass, 0);

            Optional<?> symbol =
                    (Optional<?>) lookupClass.getMethod("find", String.class).invoke(libc, "signal");
            if (symbol.isEmpty()) {
                throw new IllegalStateException("the C library has no signal()");
            }
            Object signalDescriptor = descriptorClass
                    .getMethod("of", layoutClass, layoutClass.arrayType())
                    .invoke(null, pointer, layouts(layoutClass, cInt, pointer));
            MethodHandle signal = (MethodHandle) linkerClass
                    .getMethod("downcallHandle", segmentClass, descriptorClass, optionClass.arrayType())
                    .invoke(linker, symbol.get(), signalDescriptor, noOptions);

            MethodHandles.Lookup lookup = MethodHandles.lookup();
            MethodHandle target =
                    lookup.findStatic(NativeAbort.class, "onSignal", MethodType.methodType(void.class, int.class));
            Object handlerDescriptor = descriptorClass
                    .getMethod("ofVoid", layoutClass.arrayType())
                    .invoke(null, layouts(layoutClass, cInt));
            Object global = arenaClass.getMethod("global").invoke(null);
            Object stub = linkerClass
                    .getMethod("upcallStub", MethodHandle.class, descriptorClass, arenaClass, optionClass.arrayType())
                    .invoke(linker, target, handlerDescriptor, global, noOptions);

            Object nullSegment = segmentClass.getField("NULL").get(null);
            // reinterpret is restricted and caller-sensitive: bind it with this class's full-privilege lookup
            MethodHandle reinterpret =
                    lookup.findVirtual(segmentClass, "reinterpret", MethodType.methodType(segmentClass, long.class));
            Object zeroPage = reinterpret.invoke(nullSegment, 8L);
            MethodHandle set = lookup.findVirtual(
                    segmentClass, "set", MethodType.methodType(void.class, byteLayout, long.class, byte.class));
            MethodHandle crash = MethodHandles.insertArguments(set, 0, zeroPage, cByte, 0L, (byte) 0);
            MethodHandle address = lookup.findVirtual(segmentClass, "address", MethodType.methodType(long.class));
            return new Handles(who, report, signal, address, crash, stub, nullSegment);
        }

        private static Object layouts(Class<?> layoutClass, Object... layouts) {
            Object array = Array.newInstance(layoutClass, layouts.length);
            for (int i = 0; i < layouts.length; i++) {
                Array.set(array, i, layouts[i]);
            }
            return array;
        }
    }
}
