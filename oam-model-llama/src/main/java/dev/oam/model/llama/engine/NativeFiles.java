package dev.oam.model.llama.engine;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The per-file check of a folder of llama.cpp libraries before any of them is loaded: the release's {@code lib/llama},
 * the natives extracted from the class path, a runtime {@code oam pull runtime:cuda} placed. Its {@value #FILES} lists
 * the SHA-256 and name of every file ({@code sha256sum}'s format); each must be there with that SHA-256. A tampered,
 * truncated or missing file is named in the {@link IOException}, so the caller falls back with a warning instead of
 * handing the dynamic loader a broken library (which can crash the JVM). A folder checked once in a process is not
 * hashed again while its files keep their sizes and times.
 */
public final class NativeFiles {
    /** The list of files: {@code <sha256> <name>} per line. */
    public static final String FILES = ClassPathNatives.FILES;

    private static final Map<Path, String> CHECKED = new ConcurrentHashMap<>(); // folder → stamp of its files

    private NativeFiles() {}

    /**
     * Checks every file {@code folder}'s {@value #FILES} lists.
     *
     * @throws IOException no list, a file listed but absent, or one whose SHA-256 is not the listed one (the message
     *     names it)
     */
    public static void check(Path folder) throws IOException {
        Path list = folder.resolve(FILES);
        if (!Files.isRegularFile(list)) {
            throw new IOException("it has no " + FILES + " (the SHA-256 of each file), so its files cannot be checked");
        }
        Map<String, String> files = read(list);
        if (files.isEmpty()) {
            throw new IOException(list + " lists no file");
        }
        Path key = folder.toAbsolutePath().normalize();
        String stamp = stamp(folder, files);
        if (stamp.equals(CHECKED.get(key))) {
            return;
        }
        for (Map.Entry<String, String> file : files.entrySet()) {
            Path path = folder.resolve(file.getKey());
            if (!Files.isRegularFile(path)) {
                throw new IOException(file.getKey() + " is missing (" + FILES + " lists it)");
            }
            String actual = sha256(path);
            if (!actual.equalsIgnoreCase(file.getValue())) {
                throw new IOException(file.getKey() + " has SHA-256 " + actual + ", not the listed " + file.getValue()
                        + " (" + Files.size(path) + " bytes): the file is damaged or was replaced");
            }
        }
        CHECKED.put(key, stamp);
    }

    /** The names and SHA-256s {@code list} holds; a name with a path in it is refused. */
    static Map<String, String> read(Path list) throws IOException {
        Map<String, String> files = new LinkedHashMap<>();
        try (BufferedReader lines = Files.newBufferedReader(list, StandardCharsets.UTF_8)) {
            for (String line = lines.readLine(); line != null; line = lines.readLine()) {
                if (line.isBlank()) {
                    continue;
                }
                String[] parts = line.strip().split("\\s+\\*?", 2);
                if (parts.length != 2
                        || !parts[0].matches("[0-9a-fA-F]{64}")
                        || parts[1].contains("/")
                        || parts[1].contains("\\")
                        || parts[1].startsWith(".")) {
                    throw new IOException(list + " has a line that is not '<sha256>  <file name>': " + line);
                }
                files.put(parts[1], parts[0]);
            }
        }
        return files;
    }

    private static String stamp(Path folder, Map<String, String> files) {
        StringBuilder stamp = new StringBuilder();
        for (String name : files.keySet()) {
            Path path = folder.resolve(name);
            try {
                stamp.append(name)
                        .append(':')
                        .append(Files.size(path))
                        .append(':')
                        .append(Files.getLastModifiedTime(path).toMillis())
                        .append(';');
            } catch (IOException e) {
                stamp.append(name).append(":?;");
            }
        }
        return stamp.toString();
    }

    static String sha256(Path file) throws IOException {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
        byte[] buffer = new byte[1 << 16];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n = in.read(buffer); n > 0; n = in.read(buffer)) {
                digest.update(buffer, 0, n);
            }
        }
        return HexFormat.of().formatHex(digest.digest());
    }
}
