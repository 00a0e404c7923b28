package dev.oam.core.os;

import dev.oam.core.Environment;
import java.io.IOException;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodType;
import java.lang.reflect.Array;
import java.lang.reflect.InvocationTargetException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A few functions of the C library ({@code dup}, {@code dup2}, {@code write}, {@code getenv}, {@code setenv}, and on
 * Linux {@code ioctl(FIONREAD)}) through the Foreign Function &amp; Memory API, for process hygiene: moving file
 * descriptors around so that native code cannot write into the protocol stream.
 *
 * <p>We compile with {@code release 21}, where FFM is still a preview API, but run on JDK 22 or newer, where it is
 * final. So this class never names an FFM type: it finds them by name and calls them through reflection and method
 * handles. On JDK 21, on Windows (no POSIX {@code dup2} semantics for the console; callers skip the guard there) or
 * when anything about the lookup fails, {@link #isAvailable()} is {@code false} and every other method throws
 * {@link UnsupportedOperationException}; nothing is thrown while finding out.
 *
 * <p>Creating the downcall handles is a <em>restricted</em> operation: start the JVM with
 * {@code --enable-native-access=ALL-UNNAMED} (bin/oam does, the shaded jar's manifest says so), otherwise JDK 22+
 * prints a warning on stderr. Nothing happens until the first use of this class, so a JVM that never uses it (the one
 * the C ABI creates) never touches FFM.
 */
public final class Posix {
    private static final Functions FUNCTIONS = Functions.load();
    private static final long FIONREAD = 0x541B; // Linux on x86-64 and AArch64 (bound only there)

    private Posix() {}

    /** Whether the functions below work in this JVM (JDK 22+ on Linux or macOS). */
    public static boolean isAvailable() {
        return FUNCTIONS.available;
    }

    /** Why {@link #isAvailable()} is false (for a debug log), or "" when it is true. */
    public static String unavailableReason() {
        return FUNCTIONS.reason;
    }

    /** {@code dup(fd)}: a new descriptor for the same open file. */
    public static int dup(int fd) throws IOException {
        return check("dup", (int) invoke(FUNCTIONS.dup, fd));
    }

    /** {@code dup2(from, to)}: makes {@code to} refer to what {@code from} refers to. */
    public static void dup2(int from, int to) throws IOException {
        check("dup2", (int) invoke(FUNCTIONS.dup2, from, to));
    }

    /** {@code write(fd, bytes)} until every byte is written (no Java buffering in between). */
    public static void write(int fd, byte[] bytes) throws IOException {
        Object arena = openArena();
        try {
            Object segment = FUNCTIONS.allocate.invoke(arena, (long) Math.max(1, bytes.length));
            ((ByteBuffer) FUNCTIONS.asByteBuffer.invoke(segment)).put(bytes);
            long done = 0;
            while (done < bytes.length) {
                Object rest = FUNCTIONS.asSlice.invoke(segment, done);
                long n = (long) FUNCTIONS.write.invoke(fd, rest, (long) bytes.length - done);
                check("write", n);
                done += n;
            }
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("write through FFM failed", e);
        } finally {
            closeArena(arena);
        }
    }

    /**
     * {@code ioctl(fd, FIONREAD)} on Linux (x86-64, AArch64): for a pipe, the bytes written to it and not read yet,
     * whichever end {@code fd} is. Throws {@link UnsupportedOperationException} on other systems (the request number
     * differs).
     */
    public static int bytesUnread(int fd) throws IOException {
        if (FUNCTIONS.ioctl == null) {
            throw new UnsupportedOperationException("ioctl(FIONREAD) is used on Linux only");
        }
        Object arena = openArena();
        try {
            Object count = FUNCTIONS.allocate.invoke(arena, 4L);
            check("ioctl(FIONREAD)", (int) FUNCTIONS.ioctl.invoke(fd, FIONREAD, count));
            return ((ByteBuffer) FUNCTIONS.asByteBuffer.invoke(count))
                    .order(java.nio.ByteOrder.nativeOrder())
                    .getInt(0);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("ioctl through FFM failed", e);
        } finally {
            closeArena(arena);
        }
    }

    /**
     * The C library's {@code getenv(name)}, or empty. Unlike {@link System#getenv(String)}, which is a snapshot taken
     * when the JVM started, this sees {@link #setenv} of this process.
     */
    public static Optional<String> getenv(String name) {
        Object arena = openArena();
        try {
            Object value = FUNCTIONS.getenv.invoke(FUNCTIONS.allocateFrom.invoke(arena, name));
            if ((long) FUNCTIONS.address.invoke(value) == 0) {
                return Optional.empty();
            }
            Object whole = FUNCTIONS.reinterpret.invoke(value, Long.MAX_VALUE);
            return Optional.of((String) FUNCTIONS.getString.invoke(whole, 0L));
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("getenv through FFM failed", e);
        } finally {
            closeArena(arena);
        }
    }

    /**
     * {@code setenv(name, value, overwrite)}. With {@code overwrite} false an existing value is kept. Only call this
     * early, before other threads may read the environment (setenv is not thread-safe in C).
     */
    public static void setenv(String name, String value, boolean overwrite) throws IOException {
        Object arena = openArena();
        try {
            int rc = (int) FUNCTIONS.setenv.invoke(
                    FUNCTIONS.allocateFrom.invoke(arena, name),
                    FUNCTIONS.allocateFrom.invoke(arena, value),
                    overwrite ? 1 : 0);
            check("setenv", rc);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("setenv through FFM failed", e);
        } finally {
            closeArena(arena);
        }
    }

    private static Object invoke(MethodHandle handle, Object... args) {
        require();
        try {
            return handle.invokeWithArguments(args);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("a call through FFM failed", e);
        }
    }

    /** A confined arena (an {@code Arena}) for the native copies of one call's arguments. */
    private static Object openArena() {
        require();
        try {
            return FUNCTIONS.arenaOfConfined.invoke();
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("cannot open an arena", e);
        }
    }

    private static void closeArena(Object arena) {
        try {
            FUNCTIONS.close.invoke(arena);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException("cannot close an arena", e);
        }
    }

    private static void require() {
        if (!FUNCTIONS.available) {
            throw new UnsupportedOperationException("POSIX calls are not available: " + FUNCTIONS.reason);
        }
    }

    private static int check(String what, int rc) throws IOException {
        check(what, (long) rc);
        return rc;
    }

    private static void check(String what, long rc) throws IOException {
        if (rc < 0) {
            throw new IOException(what + " failed (returned " + rc + ")");
        }
    }

    /** The handles, found once. All null when not available. */
    private static final class Functions {
        final boolean available;
        final String reason;
        MethodHandle dup, dup2, write, getenv, setenv;

        @Nullable
        MethodHandle ioctl; // Linux only

        MethodHandle arenaOfConfined,
                close,
                allocate,
                allocateFrom,
                asByteBuffer,
                asSlice,
                address,
                reinterpret,
                getString;

        private Functions(String reason) {
            this.available = reason.isEmpty();
            this.reason = reason;
        }

        static Functions load() {
            if (jvmFact("os.name").toLowerCase(Locale.ROOT).startsWith("windows")) {
                return new Functions("not on Windows");
            }
            if (Runtime.version().feature() < 22) {
                return new Functions("the Foreign Function & Memory API is final only from JDK 22 (this is "
                        + Runtime.version().feature() + ")");
            }
            try {
                Functions f = new Functions("");
                f.bind();
                return f;
            } catch (Throwable e) {
                // A JVM without native access (--illegal-native-access=deny), a libc without a symbol, …
                Throwable cause =
                        e instanceof InvocationTargetException ite && ite.getCause() != null ? ite.getCause() : e;
                return new Functions("the Foreign Function & Memory API could not be used: " + cause);
            }
        }

        private void bind() throws Throwable {
            Class<?> linkerClass = Class.forName("java.lang.foreign.Linker");
            Class<?> lookupClass = Class.forName("java.lang.foreign.SymbolLookup");
            Class<?> layoutClass = Class.forName("java.lang.foreign.MemoryLayout");
            Class<?> valueLayout = Class.forName("java.lang.foreign.ValueLayout");
            Class<?> descriptorClass = Class.forName("java.lang.foreign.FunctionDescriptor");
            Class<?> segmentClass = Class.forName("java.lang.foreign.MemorySegment");
            Class<?> optionClass = Class.forName("java.lang.foreign.Linker$Option");
            Class<?> arenaClass = Class.forName("java.lang.foreign.Arena");
            Class<?> allocatorClass = Class.forName("java.lang.foreign.SegmentAllocator");

            Object linker = linkerClass.getMethod("nativeLinker").invoke(null);
            Object libc = linkerClass.getMethod("defaultLookup").invoke(linker);
            Object cInt = valueLayout.getField("JAVA_INT").get(null);
            Object cLong = valueLayout.getField("JAVA_LONG").get(null); // size_t and ssize_t on LP64
            Object pointer = valueLayout.getField("ADDRESS").get(null);

            java.lang.reflect.Method find = lookupClass.getMethod("find", String.class);
            java.lang.reflect.Method of = descriptorClass.getMethod("of", layoutClass, layoutClass.arrayType());
            java.lang.reflect.Method downcall =
                    linkerClass.getMethod("downcallHandle", segmentClass, descriptorClass, optionClass.arrayType());
            Object noOptions = Array.newInstance(optionClass, 0);
            record C(String name, Object result, Object[] args) {}
            MethodHandle[] handles = new MethodHandle[5];
            C[] functions = {
                new C("dup", cInt, new Object[] {cInt}),
                new C("dup2", cInt, new Object[] {cInt, cInt}),
                new C("write", cLong, new Object[] {cInt, pointer, cLong}),
                new C("getenv", pointer, new Object[] {pointer}),
                new C("setenv", cInt, new Object[] {pointer, pointer, cInt}),
            };
            for (int i = 0; i < functions.length; i++) {
                C c = functions[i];
                Optional<?> symbol = (Optional<?>) find.invoke(libc, c.name());
                if (symbol.isEmpty()) {
                    throw new IllegalStateException("the C library has no " + c.name());
                }
                Object args = Array.newInstance(layoutClass, c.args().length);
                for (int j = 0; j < c.args().length; j++) {
                    Array.set(args, j, c.args()[j]);
                }
                Object descriptor = of.invoke(null, c.result(), args);
                handles[i] = (MethodHandle) downcall.invoke(linker, symbol.get(), descriptor, noOptions);
            }
            dup = handles[0];
            dup2 = handles[1];
            write = handles[2];
            getenv = handles[3];
            setenv = handles[4];

            // A full-privilege lookup: restricted methods (reinterpret) are caller-sensitive.
            var lookup = java.lang.invoke.MethodHandles.lookup();
            arenaOfConfined = lookup.findStatic(arenaClass, "ofConfined", MethodType.methodType(arenaClass));
            allocate = lookup.findVirtual(allocatorClass, "allocate", MethodType.methodType(segmentClass, long.class));
            allocateFrom = lookup.findVirtual(
                    allocatorClass, "allocateFrom", MethodType.methodType(segmentClass, String.class));
            asByteBuffer = lookup.findVirtual(segmentClass, "asByteBuffer", MethodType.methodType(ByteBuffer.class));
            asSlice = lookup.findVirtual(segmentClass, "asSlice", MethodType.methodType(segmentClass, long.class));
            address = lookup.findVirtual(segmentClass, "address", MethodType.methodType(long.class));
            reinterpret =
                    lookup.findVirtual(segmentClass, "reinterpret", MethodType.methodType(segmentClass, long.class));
            getString = lookup.findVirtual(segmentClass, "getString", MethodType.methodType(String.class, long.class));
            close = lookup.findVirtual(arenaClass, "close", MethodType.methodType(void.class));

            // int ioctl(int fd, unsigned long request, ...): variadic from its third argument.
            if (jvmFact("os.name").equals("Linux")
                    && List.of("amd64", "x86_64", "aarch64").contains(jvmFact("os.arch"))) {
                Optional<?> symbol = (Optional<?>) find.invoke(libc, "ioctl");
                if (symbol.isPresent()) {
                    Object args = Array.newInstance(layoutClass, 3);
                    Array.set(args, 0, cInt);
                    Array.set(args, 1, cLong);
                    Array.set(args, 2, pointer);
                    Object variadic = Array.newInstance(optionClass, 1);
                    Array.set(
                            variadic,
                            0,
                            optionClass.getMethod("firstVariadicArg", int.class).invoke(null, 2));
                    ioctl = (MethodHandle) downcall.invoke(linker, symbol.get(), of.invoke(null, cInt, args), variadic);
                }
            }
        }
    }

    /** A fact of the JVM ({@code os.name}, {@code os.arch}), or "" when unknown. */
    private static String jvmFact(String name) {
        return Environment.jvmFact(name);
    }
}
