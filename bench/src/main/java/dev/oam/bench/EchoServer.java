package dev.oam.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The baseline server: the same framing and JSON work as the bridge's ping path, without the bridge. Reads stdin lines,
 * parses each with {@link Json#parse(byte[], int, int)}, answers {@code {"jsonrpc":"2.0","id":<id>,"result":{}}}
 * through {@link Json#write} into a buffered stdout, and flushes when no more input is available. Exits at end of
 * input.
 */
public final class EchoServer {
    private EchoServer() {}

    public static void main(String[] args) throws IOException {
        InputStream in = new FileInputStream(FileDescriptor.in);
        OutputStream out = new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 64 * 1024);
        byte[] buffer = new byte[64 * 1024];
        int start = 0;
        int end = 0;
        while (true) {
            if (end == buffer.length) {
                if (start > 0) {
                    System.arraycopy(buffer, start, buffer, 0, end - start);
                    end -= start;
                    start = 0;
                } else {
                    buffer = Arrays.copyOf(buffer, buffer.length * 2);
                }
            }
            int read = in.read(buffer, end, buffer.length - end);
            if (read < 0) {
                break;
            }
            int scan = end;
            end += read;
            for (int i = scan; i < end; i++) {
                if (buffer[i] == '\n') {
                    if (i > start) {
                        out.write(answer(buffer, start, i - start).getBytes(StandardCharsets.UTF_8));
                        out.write('\n');
                    }
                    start = i + 1;
                }
            }
            if (start == end) {
                start = 0;
                end = 0;
            }
            if (in.available() == 0) {
                out.flush();
            }
        }
        out.flush();
    }

    /** Parses one request line and returns the response line (without newline). */
    static String answer(byte[] bytes, int offset, int length) {
        try {
            return respond(Json.parse(bytes, offset, length));
        } catch (IOException | RuntimeException e) {
            return "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}";
        }
    }

    /** The in-process echo: parse one line and serialize the answer. */
    static String answer(String line) {
        try {
            return respond(Json.parse(line));
        } catch (IOException | RuntimeException e) {
            return "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"Parse error\"}}";
        }
    }

    private static String respond(JsonNode request) {
        ObjectNode response = Json.object();
        response.put("jsonrpc", "2.0");
        JsonNode id = request.get("id");
        response.set("id", id == null ? NullNode.getInstance() : id);
        response.set("result", Json.object());
        return Json.write(response);
    }
}
