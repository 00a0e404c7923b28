package dev.oam.model.llama.engine;

import dev.oam.core.Log;
import dev.oam.core.os.Posix;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Loads the binding's native library ({@code libjllama}) lazily, once per JVM, the first time a model is opened.
 *
 * <p>Why not let {@code de.kherud.llama.LlamaLoader} do it: on class initialisation it deletes every entry named
 * {@code llama*}/{@code jllama*} in {@code java.io.tmpdir}, prints to {@code System.out} (which carries the protocol in
 * {@code oam stdio}) and extracts to one shared {@code /tmp/libjllama.so} that concurrent JVMs race on. So this class
 * extracts the library itself into a private cache folder ({@code $OAM_NATIVE_DIR}, else
 * {@code ~/.cache/oam/native/llama-4.2.0-<os>-<arch>/}), writing a temporary file in that folder and moving it into
 * place (reused when its size and SHA-256 match; nothing else in the folder is ever deleted), points
 * {@code de.kherud.llama.lib.path} at it and {@code de.kherud.llama.tmpdir} at an empty private folder inside it, and
 * initialises {@code LlamaModel} with {@code System.out} pointed at {@code System.err}.
 *
 * <p>Nothing here runs on class loading of the backend or on ServiceLoader discovery: only {@link #load()} touches the
 * binding's classes, so hosts that never open a llama model never get llama's output or signal handlers.
 */
public final class NativeLibrary {
    public static final String BINDING_VERSION = "4.2.0";
    static final String ENV_DIR = NativeSettings.NATIVE_DIR_VARIABLE;
    /**
     * Names a {@code jllama} library of the user's to load instead of extracting the jar's ({@link #suppliedLibrary}).
     */
    static final String SUPPLIED_VARIABLE = NativeSettings.JLLAMA_VARIABLE;

    private static final String LIB_PATH_PROPERTY = "de.kherud.llama.lib.path";
    private static final String TMPDIR_PROPERTY = "de.kherud.llama.tmpdir";
    private static final Object LOCK = new Object();
    private static @Nullable Path loadedFrom; // guarded by LOCK
    private static @Nullable Exception failure; // guarded by LOCK: a failed load is not retried
    private static @Nullable Path extracted; // guarded by LOCK: the library file, once extracted

    private NativeLibrary() {}

    /** The binding's folder and file name for one platform. */
    record Platform(String os, String arch, String fileName) {
        String resource() {
            return "de/kherud/llama/" + os + "/" + arch + "/" + fileName;
        }

        String cacheFolderName() {
            return "llama-" + BINDING_VERSION + "-" + os.toLowerCase(Locale.ROOT) + "-" + arch;
        }
    }

    /**
     * Loads the library unless already loaded; returns the folder it was loaded from.
     *
     * @throws IOException the library could not be extracted, or this OS/architecture has none
     * @throws IllegalStateException the library is there but cannot be linked (e.g. {@code libgomp.so.1} missing)
     */
    public static Path load(NativeSettings natives) throws IOException {
        synchronized (LOCK) {
            if (loadedFrom != null) {
                return loadedFrom;
            }
            if (failure != null) {
                throw rethrow(failure);
            }
            try {
                Path library = extractOnce(natives);
                initialiseBinding(library.getParent());
                loadedFrom = library.getParent();
                return loadedFrom;
            } catch (IOException | RuntimeException | LinkageError e) {
                Exception reported = e instanceof Exception ex ? ex : new IllegalStateException(linkMessage(e), e);
                failure = reported;
                throw rethrow(reported);
            }
        }
    }

    /**
     * The library file, extracted (once per JVM) but not loaded: for the FFM engine, which opens it with
     * {@code SymbolLookup.libraryLookup} (no {@code JNI_OnLoad}, no binding class). Sets GGML_NO_BACKTRACE first.
     *
     * @throws IOException the library could not be extracted, or this OS/architecture has none
     */
    public static Path extractedLibrary(NativeSettings natives) throws IOException {
        synchronized (LOCK) {
            return extractOnce(natives);
        }
    }

    // guarded by LOCK
    private static Path extractOnce(NativeSettings natives) throws IOException {
        if (extracted != null) {
            return extracted;
        }
        Platform platform = platform(natives.osName(), natives.osArch());
        Path supplied = suppliedLibrary(natives.jllamaLibrary(), platform);
        if (supplied != null) {
            Log.info("llama.cpp JNI library: " + supplied + " (" + SUPPLIED_VARIABLE + "), used as it is");
            noBacktraces();
            extracted = supplied;
            return supplied;
        }
        Path folder = cacheFolder(natives.nativeDir(), natives.home(), platform);
        Path library;
        try {
            library = extract(platform, folder);
        } catch (IOException e) {
            throw new IOException(
                    "cannot extract llama.cpp's native library into " + folder + ": " + e + " (set " + ENV_DIR
                            + " to a writable folder)",
                    e);
        }
        noBacktraces();
        extracted = library;
        return library;
    }

    private static IOException rethrow(Exception e) throws IOException {
        if (e instanceof IOException io) {
            throw new IOException(io.getMessage(), io);
        }
        if (e instanceof IllegalStateException ise) {
            throw new IllegalStateException(ise.getMessage(), ise);
        }
        throw new IllegalStateException(e.getMessage(), e);
    }

    static String linkMessage(Throwable e) {
        String detail = String.valueOf(e.getMessage());
        String hint = detail.contains("libgomp")
                ? " (install the OpenMP runtime: Debian/Ubuntu package 'libgomp1', Fedora 'libgomp', Alpine 'libgomp')"
                : "";
        return "cannot load llama.cpp's native library: " + detail + hint;
    }

    /** Maps Java's {@code os.name}/{@code os.arch} to the binding's resource folders. */
    static Platform platform(String osName, String osArch) throws IOException {
        String lowerOs = osName.toLowerCase(Locale.ROOT);
        String os;
        String file;
        if (lowerOs.startsWith("linux")) {
            os = "Linux";
            file = "libjllama.so";
        } else if (lowerOs.startsWith("mac") || lowerOs.startsWith("darwin")) {
            os = "Mac";
            file = "libjllama.dylib";
        } else if (lowerOs.startsWith("windows")) {
            os = "Windows";
            file = "jllama.dll";
        } else {
            throw new IOException("llama.cpp models are not supported on " + osName + " " + osArch
                    + " (the binding ships Linux, macOS and Windows libraries)");
        }
        String arch = switch (osArch.toLowerCase(Locale.ROOT)) {
            case "amd64", "x86_64", "x64" -> "x86_64";
            case "aarch64", "arm64" -> "aarch64";
            default -> null;
        };
        if (arch == null || os.equals("Windows") && arch.equals("aarch64")) {
            throw new IOException("llama.cpp models are not supported on " + osName + " " + osArch
                    + " (the binding ships x86_64 and aarch64 libraries for Linux and macOS, x86_64 for Windows)");
        }
        return new Platform(os, arch, file);
    }

    /**
     * A {@code jllama} library of the user's ({@value #SUPPLIED_VARIABLE}): java-llama.cpp {@value #BINDING_VERSION}'s
     * native code built by the user (with CUDA, Vulkan or Metal, say), loaded from where it is instead of the jar's
     * copy; nothing is extracted or overwritten. It must carry the platform's file name ({@code libjllama.so},
     * {@code libjllama.dylib}, {@code jllama.dll}), which the binding's loader looks for in its folder; null when
     * unset.
     *
     * @throws IOException the variable names no such file
     */
    static @Nullable Path suppliedLibrary(@Nullable String value, Platform platform) throws IOException {
        if (value == null || value.isBlank()) {
            return null;
        }
        Path file = Path.of(value.strip()).toAbsolutePath();
        if (!Files.isRegularFile(file)) {
            throw new IOException(SUPPLIED_VARIABLE + "=" + value + " is not a file");
        }
        if (!file.getFileName().toString().equals(platform.fileName())) {
            throw new IOException(SUPPLIED_VARIABLE + "=" + value + " must be called " + platform.fileName()
                    + " (the binding loads that name from the library's folder)");
        }
        return file;
    }

    /** {@code $OAM_NATIVE_DIR}, else {@code <home>/.cache/oam/native/llama-4.2.0-<os>-<arch>}. */
    static Path cacheFolder(@Nullable String configured, String userHome, Platform platform) {
        if (configured != null && !configured.isBlank()) {
            return Path.of(configured).toAbsolutePath();
        }
        return Path.of(userHome, ".cache", "oam", "native", platform.cacheFolderName())
                .toAbsolutePath();
    }

    /**
     * Copies the platform's library from the class path into {@code folder} unless an identical copy is there. Atomic:
     * the bytes go to a temporary file in {@code folder} that is then moved over the target, so a concurrent JVM sees
     * either no file or a complete one.
     */
    static Path extract(Platform platform, Path folder) throws IOException {
        byte[] bytes;
        try (InputStream in = NativeLibrary.class.getClassLoader().getResourceAsStream(platform.resource())) {
            if (in == null) {
                throw new IOException("llama.cpp's native library " + platform.resource()
                        + " is not on the class path (is de.kherud:llama " + BINDING_VERSION + " missing?)");
            }
            bytes = in.readAllBytes();
        }
        Files.createDirectories(folder);
        Path target = folder.resolve(platform.fileName());
        if (Files.isRegularFile(target)
                && Files.size(target) == bytes.length
                && sha256(Files.readAllBytes(target)).equals(sha256(bytes))) {
            return target;
        }
        // The temporary name never starts with "llama"/"jllama": the binding's cleanup would delete it.
        Path temp = Files.createTempFile(folder, "oam-extract-", ".tmp");
        try {
            Files.write(temp, bytes);
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            } catch (FileAlreadyExistsException | java.nio.file.AccessDeniedException e) {
                // Windows: another JVM holds the library open; it is the same version, so use it if complete.
                if (!(Files.size(target) == bytes.length
                        && sha256(Files.readAllBytes(target)).equals(sha256(bytes)))) {
                    throw e;
                }
            }
        } finally {
            Files.deleteIfExists(temp);
        }
        return target;
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * ggml forks gdb on an assert and prints its backtrace on the process's stdout unless GGML_NO_BACKTRACE is set.
     * {@code oam stdio} and the C library set it at their start; this covers every other host (a game's own JVM) before
     * ggml is loaded. A value already set is kept.
     */
    public static void noBacktraces() {
        if (!Posix.isAvailable()) {
            return; // JDK 21, or Windows, where ggml runs no debugger
        }
        try {
            if (Posix.getenv("GGML_NO_BACKTRACE").isPresent()) {
                return; // the usual case: set by the host (bin/oam, oam stdio, the C library, the user)
            }
            // Other threads exist by now; setenv adds one entry once, before ggml is there to read it.
            Posix.setenv("GGML_NO_BACKTRACE", "1", false);
        } catch (IOException e) {
            Log.warning("cannot set GGML_NO_BACKTRACE: " + e.getMessage());
        }
    }

    /** Runs {@code LlamaModel}'s static initialiser (which loads the library) with stdout pointed at stderr. */
    private static void initialiseBinding(Path libraryFolder) throws IOException {
        Path tmp = libraryFolder.resolve("tmp");
        Files.createDirectories(tmp);
        System.setProperty(LIB_PATH_PROPERTY, libraryFolder.toString());
        System.setProperty(TMPDIR_PROPERTY, tmp.toString());
        PrintStream out = System.out;
        long start = System.nanoTime();
        // Only this thread's prints go to stderr: the host's other threads keep their stdout (oam serve prints the
        // address it listens on while a model loads in the background; a reader of that line must get it).
        System.setOut(loaderToStderr(Thread.currentThread(), out));
        try {
            Class.forName("de.kherud.llama.LlamaModel", true, NativeLibrary.class.getClassLoader());
        } catch (ClassNotFoundException e) {
            throw new IOException("de.kherud:llama " + BINDING_VERSION + " is not on the class path", e);
        } catch (ExceptionInInitializerError e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new IllegalStateException(linkMessage(cause), cause);
        } catch (UnsatisfiedLinkError e) {
            throw new IllegalStateException(linkMessage(e), e);
        } finally {
            System.setOut(out);
        }
        Log.debug("llama.cpp native library loaded from " + libraryFolder + " in "
                + (System.nanoTime() - start) / 1_000_000 + " ms");
    }

    /**
     * A System.out that sends what {@code loader} prints to stderr and what every other thread prints to {@code out}.
     */
    static PrintStream loaderToStderr(Thread loader, PrintStream out) {
        OutputStream split = new OutputStream() {
            private PrintStream target() {
                return Thread.currentThread() == loader ? System.err : out;
            }

            @Override
            public void write(int b) {
                target().write(b);
            }

            @Override
            public void write(byte[] b, int off, int len) {
                target().write(b, off, len);
            }

            @Override
            public void flush() {
                out.flush();
                System.err.flush();
            }
        };
        return new PrintStream(split, true, java.nio.charset.StandardCharsets.UTF_8);
    }
}
