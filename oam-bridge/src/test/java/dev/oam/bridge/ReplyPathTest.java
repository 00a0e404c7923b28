package dev.oam.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.bridge.transport.DeliveryListener;
import dev.oam.bridge.transport.DeliveryListener.ReplyPath;
import dev.oam.bridge.transport.LineInput;
import dev.oam.bridge.transport.StreamSink;
import dev.oam.core.json.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** How each client reply to a {@code tool/call} reached its turn, as the engine tells a stream sink's listener. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ReplyPathTest {
    private static final String SESSION = "{\"session\":\"guard\",\"tools\":[{\"name\":\"open_gate\","
            + "\"description\":\"Open a gate.\"}],\"model\":{\"type\":\"scripted\",\"steps\":[{\"toolCalls\":"
            + "[{\"name\":\"open_gate\",\"arguments\":{}}]},{\"text\":\"done\"}]}}";

    /** A pipe-like sink whose lines all go through the writer thread, with a listener recording reply paths. */
    private static final class Pipe implements MessageSink, StreamSink {
        final BlockingQueue<JsonNode> lines = new LinkedBlockingQueue<>();
        final List<ReplyPath> paths = new ArrayList<>(); // guarded by this

        @Override
        public void send(String line) throws Exception {
            lines.add(Json.parse(line));
        }

        @Override
        public boolean buffers(String line) {
            return false;
        }

        @Override
        public boolean takesWithoutBlocking(String line) {
            return false;
        }

        @Override
        public void connect(LineInput input) {}

        @Override
        public DeliveryListener deliveryListener() {
            return new DeliveryListener() {
                @Override
                public void toolReply(ReplyPath path) {
                    synchronized (Pipe.this) {
                        paths.add(path);
                    }
                }
            };
        }

        synchronized List<ReplyPath> paths() {
            return List.copyOf(paths);
        }

        JsonNode next(String method) throws InterruptedException {
            while (true) {
                JsonNode line = lines.poll(30, TimeUnit.SECONDS);
                assertThat(line).as("a %s line", method).isNotNull();
                if (line.path("method").asText().equals(method)) {
                    return line;
                }
            }
        }

        JsonNode response(int id) throws InterruptedException {
            while (true) {
                JsonNode line = lines.poll(30, TimeUnit.SECONDS);
                assertThat(line).as("the response %d", id).isNotNull();
                if (!line.has("method") && line.path("id").asInt(-1) == id) {
                    return line;
                }
            }
        }
    }

    /** Runs one turn with one client tool call; returns the paths told for the client's reply. */
    private static List<ReplyPath> turn(boolean stream) throws Exception {
        Pipe pipe = new Pipe();
        try (BridgeEngine engine = BridgeEngine.withSink(BridgeConfiguration.defaults(), pipe)) {
            engine.receive("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"session/create\",\"params\":" + SESSION + "}");
            assertThat(pipe.response(1).has("result")).isTrue();
            engine.receive("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"session/respond\",\"params\":"
                    + "{\"session\":\"guard\",\"prompt\":\"Open it.\",\"stream\":" + stream + "}}");
            JsonNode call = pipe.next("tool/call");
            engine.receive(
                    "{\"jsonrpc\":\"2.0\",\"id\":" + Json.write(call.get("id")) + ",\"result\":{\"output\":\"open\"}}");
            // told on the thread that applied the reply, before receive returned
            List<ReplyPath> paths = pipe.paths();
            assertThat(pipe.response(2).path("result").path("text").asText()).isEqualTo("done");
            engine.receive("{\"jsonrpc\":\"2.0\",\"id\":\"t-99\",\"result\":{\"output\":\"late\"}}");
            assertThat(pipe.paths()).as("a reply nobody waits for").endsWith(ReplyPath.NO_CALL_WAITING);
            return paths;
        }
    }

    @Test
    void aStreamingTurnsReplyIsAnnouncedByTheThreadThatAppliesItUnlessTheRoundIsBusy() throws Exception {
        // The turn's thread holds its round's lock for a moment after sending; a reply then is left to it.
        assertThat(turn(true)).hasSize(1).first().isIn(ReplyPath.REPLY_THREAD, ReplyPath.TURN_THREAD);
    }

    @Test
    void aTurnThatAnnouncesOnItsOwnThreadLeavesEveryReplyToIt() throws Exception {
        assertThat(turn(false)).containsExactly(ReplyPath.TURN_THREAD);
    }
}
