package dev.oam.core.model.pull;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.zip.GZIPInputStream;
import org.jspecify.annotations.Nullable;

/**
 * The folder a {@code runtime:} pull places: the members of the npm tarball the {@link NpmRuntime} names, their
 * {@value #FILES} (SHA-256 and name, as {@code sha256sum} writes it; the engine checks every file against it at load)
 * and {@value #RECORD} (the package, its SHA-256, the backend and the module), written last.
 */
final class RuntimeFolder {
    /** The record the engine reads: the same name and keys as the release's {@code lib/llama/oam-build.properties}. */
    static final String RECORD = "oam-build.properties";
    /** The SHA-256 of every file in the folder but itself and the record. */
    static final String FILES = "files.sha256";

    private RuntimeFolder() {}

    /**
     * Writes {@code runtime}'s members from the npm tarball {@code tgz} (already checked against its SHA-256) into the
     * empty folder {@code folder}, then the file list and the record.
     *
     * @throws PullException a member is missing, or the tarball is not a gzip'd tar
     */
    static void unpack(NpmRuntime runtime, Path tgz, Path folder) throws PullException {
        Map<String, String> wanted = new LinkedHashMap<>();
        for (String member : runtime.members()) {
            wanted.put(member, NpmRuntime.fileName(member));
        }
        Map<String, String> sums = new LinkedHashMap<>();
        try (InputStream in = new BufferedInputStream(new GZIPInputStream(Files.newInputStream(tgz), 1 << 16))) {
            byte[] header = new byte[512];
            @Nullable String longName = null;
            while (in.readNBytes(header, 0, 512) == 512 && header[0] != 0) {
                String name = longName != null ? longName : name(header);
                longName = null;
                long size = Long.parseLong(field(header, 124, 12).isEmpty() ? "0" : field(header, 124, 12), 8);
                char type = (char) header[156];
                long padded = (size + 511) / 512 * 512;
                if (type == 'x' || type == 'L') {
                    byte[] body = in.readNBytes((int) padded);
                    longName = type == 'L' ? cString(body, 0, (int) size) : paxPath(body, (int) size);
                    continue;
                }
                String file = wanted.get(name);
                if (file != null && (type == '0' || type == 0)) {
                    MessageDigest digest = Transfer.sha256();
                    try (OutputStream out =
                            new DigestOutputStream(Files.newOutputStream(folder.resolve(file)), digest)) {
                        copy(in, out, size);
                    }
                    sums.put(file, HexFormat.of().formatHex(digest.digest()));
                    in.skipNBytes(padded - size);
                } else {
                    in.skipNBytes(padded);
                }
            }
        } catch (IOException | RuntimeException e) {
            throw new PullException(
                    PullException.Reason.BAD_ANSWER,
                    runtime.tarballName() + " cannot be unpacked (" + e.getMessage() + "); nothing was kept",
                    e);
        }
        for (Map.Entry<String, String> member : wanted.entrySet()) {
            if (!sums.containsKey(member.getValue())) {
                throw new PullException(
                        PullException.Reason.BAD_ANSWER,
                        runtime.tarballName() + " has no " + member.getKey() + "; nothing was kept");
            }
        }
        StringBuilder list = new StringBuilder();
        sums.forEach((file, sum) -> list.append(sum).append("  ").append(file).append('\n'));
        String record = "source=" + runtime.tarballName() + "\nsha256=" + runtime.sha256() + "\nbackend="
                + runtime.backend() + "\nlibrary=" + runtime.library() + "\npackage=" + runtime.npmPackage() + "@"
                + runtime.version() + "\nplatform=" + runtime.platform() + "\nneeds="
                + String.join(",", runtime.needs())
                + "\n";
        try {
            Files.writeString(folder.resolve(FILES), list.toString(), StandardCharsets.UTF_8);
            Files.writeString(folder.resolve(RECORD), record, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw Transfer.io(folder, e);
        }
    }

    private static void copy(InputStream in, OutputStream out, long size) throws IOException {
        byte[] buffer = new byte[1 << 16];
        long left = size;
        while (left > 0) {
            int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
            if (n < 0) {
                throw new IOException("the tarball ends inside a file");
            }
            out.write(buffer, 0, n);
            left -= n;
        }
    }

    /** A ustar header's name: {@code prefix/name} when the prefix field is set. */
    private static String name(byte[] header) {
        String name = cString(header, 0, 100);
        boolean ustar = new String(header, 257, 5, StandardCharsets.US_ASCII).equals("ustar");
        String prefix = ustar ? cString(header, 345, 155) : "";
        return prefix.isEmpty() ? name : prefix + "/" + name;
    }

    private static String field(byte[] header, int offset, int length) {
        return cString(header, offset, length).strip();
    }

    private static String cString(byte[] bytes, int offset, int length) {
        int end = offset;
        while (end < offset + length && end < bytes.length && bytes[end] != 0) {
            end++;
        }
        return new String(bytes, offset, end - offset, StandardCharsets.UTF_8);
    }

    /** The {@code path} record of a pax extended header, or null. */
    private static @Nullable String paxPath(byte[] body, int size) {
        String text = new String(body, 0, size, StandardCharsets.UTF_8);
        for (String line : text.split("\n")) {
            int space = line.indexOf(' ');
            if (space > 0 && line.startsWith("path=", space + 1)) {
                return line.substring(space + 1 + "path=".length());
            }
        }
        return null;
    }
}
