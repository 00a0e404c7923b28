package dev.oam.fuzz;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.jspecify.annotations.Nullable;

/** Helpers shared by the fuzz targets: lenient JSON decoding of an input and byte streams split at chosen points. */
public final class Inputs {
    private Inputs() {}

    /** The input as JSON, or {@code null} when it is not JSON (such inputs are not what the target is about). */
    static @Nullable JsonNode json(byte[] data) {
        try {
            return Json.parse(data, 0, data.length);
        } catch (Exception notJson) {
            return null;
        }
    }

    static String text(byte[] data) {
        return new String(data, StandardCharsets.UTF_8);
    }

    /** A deterministic random source derived from the input, so a seed always replays the same way. */
    static Random random(byte[] data, int salt) {
        return new Random(Arrays.hashCode(data) * 31L + salt);
    }

    /**
     * The ways a byte stream is cut into reads: {@code 0} whole, {@code 1} one byte per read, others at random points
     * derived from the input (some reads empty-handed, as a slow network can be).
     */
    public static InputStream split(byte[] data, int way) {
        if (way == 0) {
            return new ByteArrayInputStream(data);
        }
        Random random = random(data, way);
        return new InputStream() {
            private int position;

            @Override
            public int read() {
                return position < data.length ? data[position++] & 0xff : -1;
            }

            @Override
            public int read(byte[] buffer, int offset, int length) {
                if (length == 0) {
                    return 0;
                }
                if (position >= data.length) {
                    return -1;
                }
                int n = way == 1 ? 1 : 1 + random.nextInt(Math.min(length, 1 + random.nextInt(64)));
                n = Math.min(n, Math.min(length, data.length - position));
                System.arraycopy(data, position, buffer, offset, n);
                position += n;
                return n;
            }
        };
    }

    /** How many split ways {@link #split} knows besides the whole stream. */
    public static final int WAYS = 5;
}
