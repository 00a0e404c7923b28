package dev.oam.server;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** Sends bytes no well-behaved HTTP client would send, and reads the one response to them. */
final class RawHttp {
    private RawHttp() {}

    /** The response status and body to {@code request}, read until the server closes or the body is complete. */
    record Raw(int status, String head, String body) {}

    static Raw exchange(OpenAIServer server, String request) throws IOException {
        return exchange(server, request.getBytes(StandardCharsets.ISO_8859_1));
    }

    static Raw exchange(OpenAIServer server, byte[] request) throws IOException {
        try (Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(60_000);
            OutputStream out = socket.getOutputStream();
            try {
                out.write(request);
                out.flush();
            } catch (IOException e) {
                // The server may answer and close before reading all of a request that is too large.
            }
            return read(socket.getInputStream());
        }
    }

    /** Reads only a response head (an interim 100 Continue, say). */
    static Raw readHead(InputStream in) throws IOException {
        String head = head(in);
        return new Raw(Integer.parseInt(head.substring(9, 12)), head, "");
    }

    private static String head(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int state = 0;
        while (state < 4) {
            int b = in.read();
            if (b < 0) {
                break;
            }
            head.write(b);
            state = (b == '\r' && (state == 0 || state == 2)) || (b == '\n' && (state == 1 || state == 3))
                    ? state + 1
                    : 0;
        }
        String text = head.toString(StandardCharsets.ISO_8859_1);
        if (text.isEmpty()) {
            throw new IOException("the server closed the connection without a response");
        }
        return text;
    }

    /** Reads one response: the head, then a Content-Length body (or everything up to the close). */
    static Raw read(InputStream in) throws IOException {
        String headText = head(in);
        int status = Integer.parseInt(headText.substring(9, 12));
        int length = -1;
        for (String line : headText.split("\r\n")) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).strip());
            }
        }
        byte[] body = length >= 0 ? in.readNBytes(length) : in.readAllBytes();
        return new Raw(status, headText, new String(body, StandardCharsets.UTF_8));
    }
}
