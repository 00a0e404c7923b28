package dev.oam.model.llama.engine;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * The release's llama.cpp for JVM hosts that take oam from Maven: the platform natives artifact
 * {@code dev.oam:oam-llama-natives:<version>:<platform>} (one jar per OS and architecture, as LWJGL publishes its
 * natives; the BOM names them) holds {@code dev/oam/llama/natives/<platform>/}: the libraries, their
 * {@value LlamaBuilds#RECORD} and {@value #FILES} (the SHA-256 and name of every file). Found on the class path, the
 * folder is extracted once into {@code <cache>/native/llama-<platform>-<record's SHA-256>/} (each file checked against
 * its SHA-256, the folder moved into place whole, so concurrent JVMs see none or all of it) and used as the bundle.
 */
public final class ClassPathNatives {
    /** The list of files in the natives folder: {@code <sha256> <name>} per line, as {@code sha256sum} writes it. */
    public static final String FILES = "files.sha256";

    private ClassPathNatives() {}

    /**
     * {@code linux-x86_64}, {@code linux-aarch64}, {@code windows-x86_64}, {@code macos-arm64}, {@code macos-x86_64},
     * or null.
     */
    static @Nullable String platform(String osName, String osArch) {
        return dev.oam.core.model.pull.NpmRuntime.platform(osName, osArch); // one mapping for natives and runtimes
    }

    /** The resource folder of {@code platform}'s natives. */
    static String resourceFolder(String platform) {
        return "dev/oam/llama/natives/" + platform + "/";
    }

    /**
     * The extracted natives folder for this JVM's platform when the class path has them, else null.
     *
     * @throws IOException they are there but cannot be extracted, or a file does not match its SHA-256
     */
    static @Nullable Path extracted(NativeSettings natives, ClassLoader loader) throws IOException {
        String platform = platform(natives.osName(), natives.osArch());
        if (platform == null) {
            return null;
        }
        return extract(loader, platform, LlamaBuilds.folder(natives).resolveSibling("native"));
    }

    /** Extracts {@code platform}'s natives from {@code loader} under {@code root} (once); null when it has none. */
    static @Nullable Path extract(ClassLoader loader, String platform, Path root) throws IOException {
        String base = resourceFolder(platform);
        byte[] record;
        try (InputStream in = loader.getResourceAsStream(base + LlamaBuilds.RECORD)) {
            if (in == null) {
                return null;
            }
            record = in.readAllBytes();
        }
        Path target = root.resolve("llama-" + platform + "-" + sha256(record).substring(0, 16));
        if (Files.isRegularFile(target.resolve(LlamaBuilds.RECORD)) && Files.isRegularFile(target.resolve(FILES))) {
            return target; // complete: the record is written last, and the folder moved into place whole
        }
        deleteTree(target); // an extraction without its file list (an earlier build's): extracted again
        List<String[]> files = new ArrayList<>();
        byte[] list;
        try (InputStream in = loader.getResourceAsStream(base + FILES)) {
            if (in == null) {
                throw new IOException("the llama.cpp natives on the class path (" + base + ") have no " + FILES);
            }
            list = in.readAllBytes();
        }
        BufferedReader lines = new BufferedReader(
                new InputStreamReader(new java.io.ByteArrayInputStream(list), StandardCharsets.UTF_8));
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            String[] parts = line.strip().split("\\s+\\*?", 2);
            if (parts.length == 2 && !parts[1].contains("/") && !parts[1].contains("\\") && !parts[1].startsWith(".")) {
                files.add(parts);
            }
        }
        Files.createDirectories(root);
        Path temp = Files.createTempDirectory(root, "oam-extract-");
        try {
            for (String[] file : files) {
                if (file[1].equals(LlamaBuilds.RECORD)) {
                    continue;
                }
                try (InputStream in = loader.getResourceAsStream(base + file[1])) {
                    if (in == null) {
                        throw new IOException(base + file[1] + " is listed in " + FILES + " but not on the class path");
                    }
                    MessageDigest digest = digest();
                    Files.copy(new DigestInputStream(in, digest), temp.resolve(file[1]));
                    String actual = HexFormat.of().formatHex(digest.digest());
                    if (!actual.equalsIgnoreCase(file[0])) {
                        throw new IOException(base + file[1] + " has SHA-256 " + actual + ", not " + file[0]
                                + ": the natives jar is corrupt (download it again)");
                    }
                }
            }
            // the list goes along: each load checks the extracted files against it (NativeFiles)
            Files.write(temp.resolve(FILES), list);
            Files.write(temp.resolve(LlamaBuilds.RECORD), record);
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target);
            } catch (FileAlreadyExistsException | java.nio.file.DirectoryNotEmptyException e) {
                // another JVM extracted it meanwhile: use that one
            }
            if (!Files.isRegularFile(target.resolve(LlamaBuilds.RECORD))) {
                throw new IOException("cannot extract the llama.cpp natives into " + target);
            }
            return target;
        } finally {
            deleteTree(temp);
        }
    }

    private static void deleteTree(Path folder) throws IOException {
        if (!Files.exists(folder)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(folder)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    private static MessageDigest digest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static String sha256(byte[] bytes) {
        return HexFormat.of().formatHex(digest().digest(bytes));
    }
}
