package dev.oam.testing.inprocess;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.zip.GZIPOutputStream;

/** npm-style tarballs for the runtime pull tests. */
public final class RuntimeTarballs {
    private RuntimeTarballs() {}

    /** A gzip'd ustar archive of {@code members}, as npm packs a package. */
    public static byte[] tarball(Map<String, byte[]> members) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(bytes)) {
            for (Map.Entry<String, byte[]> member : members.entrySet()) {
                byte[] header = new byte[512];
                byte[] name = member.getKey().getBytes(StandardCharsets.US_ASCII);
                System.arraycopy(name, 0, header, 0, name.length);
                put(header, 100, "0000644");
                put(header, 108, "0000000");
                put(header, 116, "0000000");
                put(header, 124, String.format("%011o", member.getValue().length));
                put(header, 136, "00000000000");
                header[156] = '0';
                put(header, 257, "ustar");
                header[262] = 0;
                put(header, 263, "00");
                for (int i = 148; i < 156; i++) {
                    header[i] = ' ';
                }
                int sum = 0;
                for (byte b : header) {
                    sum += b & 0xff;
                }
                put(header, 148, String.format("%06o", sum));
                header[154] = 0;
                gzip.write(header);
                gzip.write(member.getValue());
                gzip.write(new byte[(512 - member.getValue().length % 512) % 512]);
            }
            gzip.write(new byte[1024]);
        }
        return bytes.toByteArray();
    }

    private static void put(byte[] header, int offset, String text) {
        byte[] ascii = text.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(ascii, 0, header, offset, ascii.length);
    }
}
