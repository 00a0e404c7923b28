package dev.oam.bench;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.VirtualThreadPool;

/**
 * The raw baseline of {@code bench/run serve}: the same server library as {@code oam serve} (Jetty 12, virtual threads,
 * one connector thread) answering every POST with a fixed Chat Completions stream of the same shape (a role chunk, one
 * chunk per text piece, the finish chunk, {@code [DONE]}, each event flushed on its own). It reads and drops the
 * request body. Prints its port on stdout.
 */
public final class StaticSseServer {
    private StaticSseServer() {}

    public static void main(String[] args) throws Exception {
        List<String> pieces = ServeBench.PIECES;
        List<byte[]> events = new ArrayList<>();
        String head =
                "{\"id\":\"chatcmpl-static\",\"object\":\"chat.completion.chunk\",\"created\":0,\"model\":\"system\","
                        + "\"system_fingerprint\":null,\"choices\":[{\"index\":0,\"delta\":";
        events.add(
                event(head + "{\"role\":\"assistant\",\"content\":\"\"},\"logprobs\":null,\"finish_reason\":null}]}"));
        for (String piece : pieces) {
            events.add(event(head + "{\"content\":\"" + piece + "\"},\"logprobs\":null,\"finish_reason\":null}]}"));
        }
        events.add(event(head + "{},\"logprobs\":null,\"finish_reason\":\"stop\"}]}"));
        events.add(event("[DONE]"));
        VirtualThreadPool threads = new VirtualThreadPool();
        Server server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        ServerConnector connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                Content.Source.asInputStream(request).readAllBytes();
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream; charset=utf-8");
                try (var out = Content.Sink.asOutputStream(response)) {
                    for (byte[] event : events) {
                        out.write(event);
                        out.flush();
                    }
                }
                callback.succeeded();
                return true;
            }
        });
        server.start();
        System.out.println(connector.getLocalPort());
        System.out.flush();
        // Runs until the harness closes standard input.
        System.in.read();
        server.stop();
    }

    private static byte[] event(String data) {
        return ("data: " + data + "\n\n").getBytes(StandardCharsets.UTF_8);
    }
}
