package dev.oam.bench;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import dev.oam.core.json.Json;

/** The line handlers the measurements use. */
final class Probes {
    private Probes() {}

    /** Counts {@code expected} result lines (pipelined throughput); any error answer fails it. */
    static final class Counter extends Probe {
        private final int expected;
        private int count; // delivery thread only
        private volatile long lastNanos;

        Counter(int expected) {
            this.expected = expected;
        }

        @Override
        public void onLine(String line, long nanos) {
            if (!isResult(line)) {
                fail("unexpected answer: " + shorten(line));
                return;
            }
            count(nanos);
        }

        @Override
        public void onLine(byte[] buffer, int offset, int length, long nanos) {
            if (!isResult(buffer, offset, length)) {
                fail("unexpected answer: "
                        + shorten(new String(buffer, offset, length, java.nio.charset.StandardCharsets.UTF_8)));
                return;
            }
            count(nanos);
        }

        private void count(long nanos) {
            if (++count == expected) {
                lastNanos = nanos;
                finish();
            }
        }

        /** Arrival time of the last expected answer. */
        long lastNanos() {
            return lastNanos;
        }

        @Override
        String progress() {
            return " (" + count + " of " + expected + " answers arrived)";
        }
    }

    /** Waits for the answer to one control request (string id {@code c-<n>}); ignores other lines. */
    static final class Control extends Probe {
        private final String id;
        private volatile JsonNode result;

        Control(String id) {
            this.id = id;
        }

        @Override
        public void onLine(String line, long nanos) {
            if (!line.contains("\"" + id + "\"")) {
                return;
            }
            JsonNode message;
            try {
                message = Json.parse(line);
            } catch (JsonProcessingException e) {
                fail("unparsable answer: " + shorten(line));
                return;
            }
            JsonNode idNode = message.get("id");
            if (idNode == null || !id.equals(idNode.asText())) {
                return;
            }
            if (message.has("error")) {
                fail("error answer: " + shorten(line));
                return;
            }
            result = message.get("result");
            finish();
        }

        JsonNode result() {
            return result;
        }
    }

    /** Sequential pings: sends one, waits for its answer, sends the next; records every round trip. */
    static final class PingLatency extends Probe {
        private final Channel channel;
        private final String[] lines;
        private final long[] samples;
        private int index;
        private long sentAt;

        PingLatency(Channel channel, String[] lines) {
            this.channel = channel;
            this.lines = lines;
            this.samples = new long[lines.length];
        }

        void start() {
            sendNext();
        }

        private void sendNext() {
            sentAt = System.nanoTime();
            channel.send(lines[index]);
            channel.flush();
        }

        @Override
        public void onLine(String line, long nanos) {
            if (!isResult(line)) {
                fail("unexpected answer: " + shorten(line));
                return;
            }
            samples[index] = nanos - sentAt;
            index++;
            if (index == lines.length) {
                finish();
            } else {
                sendNext();
            }
        }

        long[] samples() {
            return samples;
        }

        @Override
        String progress() {
            return " (" + index + " of " + lines.length + " pings answered)";
        }
    }

    /**
     * Sequential tool turns with {@code stream: true}: sends {@code session/respond}, answers the {@code tool/call} at
     * once, and records (a) reply sent -> {@code toolCallCompleted} event arrived and (b) respond sent -> response
     * arrived. Checks each turn's result. Turn numbers continue across probes ({@code firstTurn}), so one session's
     * script is played in order.
     */
    static final class ToolTurns extends Probe {
        static final String ANSWER = "The gate is open.";
        private static final int FIRST_ID = 500_000;

        private final Channel channel;
        private final String[] sessions;
        private final int turnsPerSession;
        private final int firstTurn;
        private final int count;
        private final long[] roundTrips;
        private final long[] repliedAts; // System.nanoTime() when each tool reply was sent (to line up with JVM logs)
        private final long[] turns;
        private java.util.List<java.nio.file.Path> serverThreads = java.util.List.of(); // traced, when not empty
        private long[] serverWaits; // run-queue wait of serverThreads around each round trip (ns)
        private long[] clientWaits; // the same for this (the reader) thread
        private long serverWait0;
        private long clientWait0;
        private int done;
        private long sentAt;
        private long repliedAt;
        private boolean replied;
        private boolean completed;
        private String responsePrefix = "";

        /** Turn {@code i} runs on {@code sessions[i / turnsPerSession]}. */
        ToolTurns(Channel channel, String[] sessions, int turnsPerSession, int firstTurn, int count) {
            this.channel = channel;
            this.sessions = sessions;
            this.turnsPerSession = turnsPerSession;
            this.firstTurn = firstTurn;
            this.count = count;
            this.roundTrips = new long[count];
            this.repliedAts = new long[count];
            this.turns = new long[count];
        }

        void start() {
            sendTurn();
        }

        /**
         * Reads the run-queue wait of {@code threads} (the server's, {@code schedstat} files) and of the reading thread
         * right before each tool reply is sent and right after its toolCallCompleted arrived (outside the timed span,
         * which the reads would otherwise lengthen; the span they cover is a little longer than the round trip).
         */
        void traceWaits(java.util.List<java.nio.file.Path> threads) {
            serverThreads = threads;
            serverWaits = new long[count];
            clientWaits = new long[count];
        }

        long[] serverWaits() {
            return serverWaits;
        }

        long[] clientWaits() {
            return clientWaits;
        }

        private static final java.nio.file.Path OWN_STAT = java.nio.file.Path.of("/proc/thread-self/schedstat");

        private void sendTurn() {
            int turn = firstTurn + done;
            String session = sessions[Math.min(sessions.length - 1, turn / turnsPerSession)];
            replied = false;
            completed = false;
            int id = FIRST_ID + turn;
            responsePrefix = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",";
            String line =
                    "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"session/respond\",\"params\":{\"session\":\""
                            + session + "\",\"prompt\":\"Open the north gate.\",\"stream\":true}}";
            sentAt = System.nanoTime();
            channel.send(line);
            channel.flush();
        }

        @Override
        public void onLine(String line, long nanos) {
            if (line.contains("\"method\":\"session/event\"")) {
                if (line.contains("\"type\":\"toolCallCompleted\"")) {
                    if (!replied) {
                        fail("toolCallCompleted arrived before the tool reply was sent");
                        return;
                    }
                    roundTrips[done] = nanos - repliedAt;
                    repliedAts[done] = repliedAt;
                    if (!serverThreads.isEmpty()) {
                        serverWaits[done] = Meter.runQueueWait(serverThreads) - serverWait0;
                        clientWaits[done] = Meter.runQueueWait(java.util.List.of(OWN_STAT)) - clientWait0;
                    }
                    completed = true;
                }
                return;
            }
            if (line.contains("\"method\":\"tool/call\"")) {
                String id;
                try {
                    id = Json.parse(line).get("id").textValue();
                } catch (JsonProcessingException | RuntimeException e) {
                    fail("unreadable tool/call: " + shorten(line));
                    return;
                }
                String reply = "{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"result\":{\"output\":\"opened\"}}";
                if (!serverThreads.isEmpty()) {
                    serverWait0 = Meter.runQueueWait(serverThreads);
                    clientWait0 = Meter.runQueueWait(java.util.List.of(OWN_STAT));
                }
                repliedAt = System.nanoTime();
                channel.send(reply);
                channel.flush();
                replied = true;
                return;
            }
            if (line.startsWith(responsePrefix)) {
                turns[done] = nanos - sentAt;
                String problem = check(line);
                if (problem != null) {
                    fail("turn " + (firstTurn + done) + ": " + problem);
                    return;
                }
                done++;
                if (done == count) {
                    finish();
                } else {
                    sendTurn();
                }
                return;
            }
            fail("unexpected line during turn " + (firstTurn + done) + ": " + shorten(line));
        }

        private String check(String line) {
            if (!completed) {
                return "no toolCallCompleted event before the response";
            }
            try {
                JsonNode result = Json.parse(line).get("result");
                if (result == null) {
                    return "error answer: " + shorten(line);
                }
                if (!ANSWER.equals(result.path("text").asText())
                        || result.path("toolCalls").size() != 1) {
                    return "unexpected result: " + shorten(line);
                }
            } catch (JsonProcessingException e) {
                return "unparsable response: " + shorten(line);
            }
            return null;
        }

        long[] roundTrips() {
            return roundTrips;
        }

        /**
         * When each round trip began, in {@code System.nanoTime()} (CLOCK_MONOTONIC on Linux, as the JVMs'
         * {@code -Xlog} {@code tn} decorator).
         */
        long[] repliedAts() {
            return repliedAts;
        }

        long[] turns() {
            return turns;
        }

        @Override
        String progress() {
            return " (" + done + " of " + count + " turns done)";
        }
    }
}
