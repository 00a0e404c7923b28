package dev.oam.model.openai;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(10)
class SseReaderTest {
    /** Hands out at most {@code size} bytes per read, like a network delivering tiny packets. */
    private static InputStream trickle(String text, int size) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return new InputStream() {
            int position;

            @Override
            public int read() {
                return position < bytes.length ? bytes[position++] & 0xff : -1;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (position >= bytes.length) {
                    return -1;
                }
                int n = Math.min(Math.min(len, size), bytes.length - position);
                System.arraycopy(bytes, position, b, off, n);
                position += n;
                return n;
            }
        };
    }

    private static List<SseReader.Event> read(InputStream in) throws IOException {
        SseReader reader = new SseReader(in);
        List<SseReader.Event> events = new ArrayList<>();
        for (SseReader.Event e = reader.next(); e != null; e = reader.next()) {
            events.add(e);
        }
        return events;
    }

    @Test
    void eventsSurviveOneByteReadsWithCrlfAndSplitUtf8() throws IOException {
        String stream =
                ": keep-alive\r\ndata: {\"t\":\"Grüße 世界 🐉\"}\r\n\r\nevent: error\r\ndata: a\r\ndata: b\r\n\r\ndata: [DONE]\r\n\r\n";
        for (int size = 1; size <= 7; size++) {
            List<SseReader.Event> events = read(trickle(stream, size));
            assertThat(events)
                    .as("piece size %d", size)
                    .containsExactly(
                            new SseReader.Event("message", "{\"t\":\"Grüße 世界 🐉\"}"),
                            new SseReader.Event("error", "a\nb"),
                            new SseReader.Event("message", "[DONE]"));
        }
    }

    @Test
    void bareCarriageReturnsAndLineFeedsBothEndLines() throws IOException {
        assertThat(read(trickle("data: one\r\rdata: two\n\ndata:three\n\n", 2)))
                .extracting(SseReader.Event::data)
                .containsExactly("one", "two", "three");
    }

    @Test
    void aLastEventWithoutItsBlankLineStillCounts() throws IOException {
        assertThat(read(new ByteArrayInputStream("data: x\n\ndata: last".getBytes(StandardCharsets.UTF_8))))
                .extracting(SseReader.Event::data)
                .containsExactly("x", "last");
    }

    @Test
    void commentsAndUnknownFieldsAreSkipped() throws IOException {
        assertThat(read(trickle(":ping\n\nid: 7\nretry: 10\n\nfoo: bar\ndata: y\n\n", 3)))
                .extracting(SseReader.Event::data)
                .containsExactly("y");
    }
}
