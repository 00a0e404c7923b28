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
 * handing the dynamic loader a broken library (which can crash the JVM). A folder checked once is not hashed again
 * while its list and its files keep their sizes and modification times: in this process (a map), and in later ones (a
 * note in {@code <cache>/native/checked/}). That guards against damage (a cut download, a truncated copy, a replaced
 * file), not against someone who rewrites a library keeping its size and time.
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
        check(folder, null);
    }

    /**
     * {@link #check(Path)}, keeping a note of a folder that passed in {@code notes} ({@link #notes}; null: none), so a
     * later process skips the hashing while no file changed.
     */
    public static void check(Path folder, @org.jspecify.annotations.Nullable Path notes) throws IOException {
        Path list = folder.resolve(FILES);
        if (!Files.isRegularFile(list)) {
            throw new IOException("it has no " + FILES + " (the SHA-256 of each file), so its files cannot be checked");
        }
        Map<String, String> files = read(list);
        if (files.isEmpty()) {
            throw new IOException(list + " lists no file");
        }
        Path key = folder.toAbsolutePath().normalize();
        String stamp = sha256(list) + ";" + stamp(folder, files);
        if (stamp.equals(CHECKED.get(key))) {
            return;
        }
        Path note = notes == null ? null : note(notes, key);
        if (note != null && stamp.equals(readNote(note))) {
            CHECKED.put(key, stamp); // checked by an earlier process, and no file changed size or time since
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
        if (note != null) {
            try {
                Files.createDirectories(note.getParent());
                Path temp = Files.createTempFile(note.getParent(), "oam-note-", ".tmp");
                Files.writeString(temp, stamp);
                Files.move(temp, note, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            } catch (IOException | RuntimeException e) {
                // no note: the next process hashes again
            }
        }
    }

    /**
     * The note of a folder that passed the check, in {@code <cache>/native/checked/}: the list's SHA-256 and every
     * file's size and modification time then. A later process that finds the same skips the hashing (about a second for
     * the Linux folder on a cold JVM); a file that was cut or rewritten since has another size or time and is hashed
     * again.
     */
    private static @org.jspecify.annotations.Nullable Path note(Path cache, Path folder) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            String name = HexFormat.of()
                    .formatHex(digest.digest(folder.toString().getBytes(StandardCharsets.UTF_8)))
                    .substring(0, 32);
            return cache.resolve(name);
        } catch (NoSuchAlgorithmException | RuntimeException e) {
            return null;
        }
    }

    private static @org.jspecify.annotations.Nullable String readNote(Path note) {
        try {
            return Files.isRegularFile(note) ? Files.readString(note) : null;
        } catch (IOException e) {
            return null;
        }
    }

    /** Where the notes of checked folders live: {@code native/checked} in the project's cache folder. */
    public static Path notes(NativeSettings natives) {
        return natives.cacheFolder().resolve("native").resolve("checked");
    }

    /** Forgets what this process checked, as a new process would (tests). */
    static void forgetChecked() {
        CHECKED.clear();
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
