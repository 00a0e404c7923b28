package dev.oam.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.io.BufferedOutputStream;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * {@code bench/run soak}: drives one {@code oam stdio} for N minutes with a mix of what a game does (a benchmark, not a
 * test; bench/README.md): sessions with a client tool, random cancels, compaction, transcripts saved and restored; NPCs
 * talking with memory tools, saved and restored; world writes with subscribers; decisions; all on scripted models.
 * Every minute it samples the child's RSS, heap after a full GC, live threads, open file descriptors and the p50/p99
 * turn time. It fails when a request is lost or answered twice, or when one of those samples grows after the warm-up
 * beyond the bounds printed with the verdict.
 */
final class SoakBench {
    private static final Pattern HEAP_USED = Pattern.compile("used (\\d+)K");

    private final int minutes;
    private final int warmupMinutes;
    private final int sessions;
    private final int npcs;
    private final Path root;

    private Process child;
    private OutputStream toChild;
    private final Map<String, CompletableFuture<JsonNode>> pending = new ConcurrentHashMap<>();
    private final Set<String> answered = ConcurrentHashMap.newKeySet();
    private final AtomicLong ids = new AtomicLong();
    private final AtomicLong doubleAnswers = new AtomicLong();
    private final AtomicLong unknownAnswers = new AtomicLong();
    private final AtomicLong requests = new AtomicLong();
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong notifications = new AtomicLong();
    private final AtomicLong toolCalls = new AtomicLong();
    private final List<Long> turnNanos = Collections.synchronizedList(new ArrayList<>());
    private final List<String> firstProblems = Collections.synchronizedList(new ArrayList<>());
    private volatile long deadline;

    private SoakBench(int minutes, int warmupMinutes, int sessions, int npcs, Path root) {
        this.minutes = minutes;
        this.warmupMinutes = warmupMinutes;
        this.sessions = sessions;
        this.npcs = npcs;
        this.root = root;
    }

    public static void main(String[] args) throws Exception {
        int minutes = 30;
        int sessions = 32;
        int npcs = 16;
        Integer warmup = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--minutes" -> minutes = Integer.parseInt(args[++i]);
                case "--warmup" -> warmup = Integer.parseInt(args[++i]);
                case "--sessions" -> sessions = Integer.parseInt(args[++i]);
                case "--npcs" -> npcs = Integer.parseInt(args[++i]);
                case "-h", "--help" -> {
                    System.out.println(
                            "bench/run soak [--minutes N (30)] [--warmup M (N/5, at least 1)] [--sessions 32] [--npcs 16]");
                    return;
                }
                default -> {
                    System.err.println("soak: unknown option " + args[i] + " (see bench/run soak --help)");
                    System.exit(2);
                }
            }
        }
        if (minutes < 2) {
            System.err.println("soak: --minutes must be at least 2 (one to warm up, one to compare)");
            System.exit(2);
        }
        int warm = warmup != null ? warmup : Math.max(1, minutes / 5);
        Path root = Path.of(System.getProperty("oam.bench.root", "."))
                .toAbsolutePath()
                .normalize();
        int code = new SoakBench(minutes, Math.min(warm, minutes - 1), sessions, npcs, root).run();
        System.exit(code);
    }

    private record Sample(
            int minute,
            long requests,
            long turns,
            long rssKb,
            long heapKb,
            long threads,
            long fds,
            double p50Ms,
            double p99Ms,
            long errors) {}

    private int run() throws Exception {
        Path jar = root.resolve("oam-cli/target/oam.jar");
        Path log = root.resolve("bench/target/logs/soak-bridge.log");
        Files.createDirectories(log.getParent());
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        child = new ProcessBuilder(java, "-jar", jar.toString(), "stdio", "--max-sessions", "128")
                .redirectError(ProcessBuilder.Redirect.to(log.toFile()))
                .start();
        toChild = new BufferedOutputStream(child.getOutputStream(), 64 * 1024);
        Thread reader = Thread.ofPlatform().daemon().name("soak-reader").start(this::readLoop);
        System.err.printf(
                "soak: %d minutes (warm-up %d), %d sessions, %d NPCs, bridge pid %d, log %s%n",
                minutes, warmupMinutes, sessions, npcs, child.pid(), log);

        call("world/create", "{\"world\":\"w\",\"state\":{\"area\":{\"name\":\"village\"},\"stats\":{}}}");
        for (int i = 0; i < 4; i++) {
            call("world/subscribe", "{\"world\":\"w\",\"path\":\"" + (i % 2 == 0 ? "stats" : "area") + "\"}");
        }
        long start = System.nanoTime();
        deadline = start + TimeUnit.MINUTES.toNanos(minutes);
        List<Thread> actors = new ArrayList<>();
        for (int i = 0; i < sessions; i++) {
            int n = i;
            actors.add(Thread.ofVirtual().name("soak-session-" + i).start(() -> actor(() -> sessionActor(n))));
        }
        for (int i = 0; i < npcs; i++) {
            int n = i;
            actors.add(Thread.ofVirtual().name("soak-npc-" + i).start(() -> actor(() -> npcActor(n))));
        }
        actors.add(Thread.ofVirtual().name("soak-world").start(() -> actor(this::worldActor)));
        actors.add(Thread.ofVirtual().name("soak-decisions").start(() -> actor(this::decisionActor)));

        List<Sample> samples = new ArrayList<>();
        long lastRequests = 0;
        long lastErrors = 0;
        for (int minute = 1; minute <= minutes; minute++) {
            long wake = start + TimeUnit.MINUTES.toNanos(minute);
            while (System.nanoTime() < wake && child.isAlive()) {
                Thread.sleep(Math.max(1, Math.min(1000, (wake - System.nanoTime()) / 1_000_000)));
            }
            if (!child.isAlive()) {
                firstProblems.add("the bridge exited with " + child.exitValue() + " in minute " + minute);
                break;
            }
            List<Long> turns;
            synchronized (turnNanos) {
                turns = new ArrayList<>(turnNanos);
                turnNanos.clear();
            }
            Collections.sort(turns);
            long[] status = procStatus(child.pid());
            Sample sample = new Sample(
                    minute,
                    requests.get() - lastRequests,
                    turns.size(),
                    status[0],
                    heapAfterGc(child.pid()),
                    status[1],
                    openFds(child.pid()),
                    percentile(turns, 0.50),
                    percentile(turns, 0.99),
                    errors.get() - lastErrors);
            lastRequests = requests.get();
            lastErrors = errors.get();
            samples.add(sample);
            System.err.printf(
                    "soak: minute %d: %d requests, %d turns, RSS %d MB, heap after GC %d MB, %d threads, %d fds, "
                            + "turn p50 %.1f ms p99 %.1f ms%n",
                    minute,
                    sample.requests(),
                    sample.turns(),
                    sample.rssKb() / 1024,
                    sample.heapKb() / 1024,
                    sample.threads(),
                    sample.fds(),
                    sample.p50Ms(),
                    sample.p99Ms());
        }
        deadline = 0;
        for (Thread actor : actors) {
            actor.join(TimeUnit.SECONDS.toMillis(60));
        }
        long lost = pending.size();
        List<String> lostIds = new ArrayList<>(pending.keySet());
        try {
            call("shutdown", "{}");
        } catch (Exception e) {
            firstProblems.add("shutdown: " + e);
        }
        toChild.close();
        boolean exited = child.waitFor(30, TimeUnit.SECONDS);
        reader.join(5_000);

        System.out.println(table(samples));
        List<String> failures = new ArrayList<>();
        if (lost > 0) {
            failures.add(lost + " requests were never answered (e.g. " + lostIds.subList(0, Math.min(5, lostIds.size()))
                    + ")");
        }
        if (doubleAnswers.get() > 0) {
            failures.add(doubleAnswers.get() + " requests were answered twice");
        }
        if (unknownAnswers.get() > 0) {
            failures.add(unknownAnswers.get() + " answers named ids that were never sent");
        }
        if (!exited) {
            failures.add("the bridge did not exit within 30 s after shutdown and end of input");
            child.destroyForcibly();
        }
        failures.addAll(growth(samples));
        failures.addAll(firstProblems.stream()
                .filter(p -> p.startsWith("the bridge exited"))
                .toList());
        System.out.printf(
                "%ntotals: %d requests, %d error answers (cancels and expected refusals), %d tool calls answered, "
                        + "%d notifications%n",
                requests.get(), errors.get(), toolCalls.get(), notifications.get());
        if (!firstProblems.isEmpty()) {
            System.out.println("first unexpected errors (not failures by themselves): "
                    + firstProblems.subList(0, Math.min(5, firstProblems.size())));
        }
        System.out.println(bounds());
        if (failures.isEmpty()) {
            System.out.println("verdict: PASS");
            return 0;
        }
        System.out.println("verdict: FAIL");
        failures.forEach(f -> System.out.println("  - " + f));
        return 1;
    }

    // --- the workload ------------------------------------------------------------------------------

    private interface Work {
        void run() throws Exception;
    }

    private void actor(Work work) {
        try {
            work.run();
        } catch (Exception e) {
            firstProblems.add(Thread.currentThread().getName() + ": " + e);
        }
    }

    private boolean running() {
        return System.nanoTime() - deadline < 0;
    }

    private static final String TOOL = "{\"name\":\"look\",\"description\":\"Looks around and says what is there.\","
            + "\"parameters\":{\"type\":\"object\",\"properties\":{\"where\":{\"type\":\"string\"}},\"required\":[\"where\"]}}";

    /**
     * Cycles of 10 turns (each a client tool call and an answer), random cancels, compaction, save, delete, restore.
     */
    private void sessionActor(int n) throws Exception {
        Random random = new Random(n);
        String history = null;
        for (int cycle = 0; running(); cycle++) {
            StringBuilder steps = new StringBuilder();
            for (int t = 0; t < 10; t++) {
                steps.append("{\"toolCalls\":[{\"name\":\"look\",\"arguments\":{\"where\":\"room ")
                        .append(t)
                        .append("\"}}]},")
                        .append("{\"text\":\"Turn ")
                        .append(t)
                        .append(" of cycle ")
                        .append(cycle)
                        .append(": the room is quiet.\"},");
            }
            steps.append("{\"text\":\"Summary: the player looked around ten rooms.\"}");
            String id = "s" + n + "-" + cycle;
            call(
                    "session/create",
                    "{\"session\":\"" + id + "\",\"tools\":[" + TOOL + "],\"model\":{\"type\":\"scripted\",\"steps\":["
                            + steps + "]}" + (history == null ? "" : ",\"history\":" + history) + "}");
            for (int t = 0; t < 10 && running(); t++) {
                String respondId = nextId();
                long sent = System.nanoTime();
                CompletableFuture<JsonNode> turn = send(
                        respondId,
                        "session/respond",
                        "{\"session\":\"" + id + "\",\"prompt\":\"Look around, " + t + ".\"}");
                if (random.nextInt(10) == 0) {
                    send(nextId(), "session/cancel", "{\"session\":\"" + id + "\"}");
                }
                JsonNode answer = turn.get();
                if (!answer.has("error")) {
                    turnNanos.add(System.nanoTime() - sent);
                }
            }
            call("session/compact", "{\"session\":\"" + id + "\",\"keepRecentTurns\":2}");
            JsonNode transcript = call("session/transcript", "{\"session\":\"" + id + "\"}");
            history = transcript.has("result")
                    ? Json.write(transcript.path("result").path("transcript"))
                    : null;
            call("session/delete", "{\"session\":\"" + id + "\"}");
        }
    }

    /** Cycles of 8 talks with memory tools, then save, delete and restore under a new id. */
    private void npcActor(int n) throws Exception {
        JsonNode save = null;
        for (int cycle = 0; running(); cycle++) {
            StringBuilder steps = new StringBuilder();
            for (int t = 0; t < 8; t++) {
                steps.append(
                                "{\"toolCalls\":[{\"name\":\"remember_fact\",\"arguments\":{\"fact\":\"The player visited on day ")
                        .append(cycle * 8 + t)
                        .append(".\"}}]},{\"text\":\"[happy] Good to see you again.\"},");
            }
            steps.setLength(steps.length() - 1);
            String model = "{\"type\":\"scripted\",\"steps\":[" + steps + "]}";
            String id = "n" + n + "-" + cycle;
            if (save == null) {
                call(
                        "npc/create",
                        "{\"npc\":\"" + id + "\",\"persona\":{\"name\":\"Villager " + n + "\",\"role\":\"a farmer\"},"
                                + "\"world\":\"w\",\"options\":{\"memoryTools\":\"all\",\"replyFormat\":\"text\"},\"model\":"
                                + model + "}");
            } else {
                call(
                        "npc/restore",
                        "{\"npc\":\"" + id + "\",\"state\":" + Json.write(save) + ",\"model\":" + model + "}");
            }
            for (int t = 0; t < 8 && running(); t++) {
                long sent = System.nanoTime();
                JsonNode answer = call("npc/talk", "{\"npc\":\"" + id + "\",\"line\":\"Hello again, " + t + ".\"}");
                if (!answer.has("error")) {
                    turnNanos.add(System.nanoTime() - sent);
                }
            }
            JsonNode state = call("npc/state", "{\"npc\":\"" + id + "\"}");
            save = state.has("result") ? state.path("result").path("state") : null;
            call("npc/delete", "{\"npc\":\"" + id + "\"}");
        }
    }

    private void worldActor() throws Exception {
        Random random = new Random(99);
        while (running()) {
            call(
                    "world/set",
                    "{\"world\":\"w\",\"path\":\"stats.k" + random.nextInt(64) + "\",\"value\":" + random.nextInt(1000)
                            + "}");
            call(
                    "world/merge",
                    "{\"world\":\"w\",\"patch\":{\"area\":{\"weather\":\"" + (random.nextBoolean() ? "rain" : "sun")
                            + "\",\"visitors\":" + random.nextInt(50) + "}}}");
            Thread.sleep(5); // a game writes its world a few hundred times a second, not as fast as a pipe allows
        }
    }

    private void decisionActor() throws Exception {
        Random random = new Random(7);
        while (running()) {
            String choice = random.nextBoolean() ? "fight" : "flee";
            call(
                    "decision/decide",
                    "{\"situation\":\"A wolf blocks the road.\",\"options\":[\"fight\",\"flee\"],\"model\":{\"type\":"
                            + "\"scripted\",\"steps\":[{\"json\":{\"reasoning\":\"It looks hungry.\",\"choice\":\""
                            + choice
                            + "\",\"confidence\":70}}]}}");
            Thread.sleep(20);
        }
    }

    // --- the wire ------------------------------------------------------------------------------------

    private String nextId() {
        return "r" + ids.incrementAndGet();
    }

    private JsonNode call(String method, String params) throws Exception {
        return send(nextId(), method, params).get();
    }

    private CompletableFuture<JsonNode> send(String id, String method, String params) throws IOException {
        CompletableFuture<JsonNode> future = new CompletableFuture<>();
        pending.put(id, future);
        requests.incrementAndGet();
        write("{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"" + method + "\",\"params\":" + params + "}");
        return future;
    }

    private synchronized void write(String line) throws IOException {
        toChild.write(line.getBytes(StandardCharsets.UTF_8));
        toChild.write('\n');
        toChild.flush();
    }

    private void readLoop() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                JsonNode message = Json.parse(line);
                if (message.has("method")) {
                    if (message.path("method").asText().equals("tool/call") && message.has("id")) {
                        toolCalls.incrementAndGet();
                        ObjectNode reply = Json.object();
                        reply.put("jsonrpc", "2.0");
                        reply.set("id", message.get("id"));
                        reply.putObject("result").put("output", "A table, two chairs and a door.");
                        write(Json.write(reply));
                    } else {
                        notifications.incrementAndGet();
                    }
                    continue;
                }
                String id = message.path("id").asText();
                CompletableFuture<JsonNode> future = pending.remove(id);
                if (!answered.add(id)) {
                    doubleAnswers.incrementAndGet();
                    firstProblems.add("answered twice: " + id);
                } else if (future == null) {
                    unknownAnswers.incrementAndGet();
                    firstProblems.add("answer for an unknown id: " + line);
                }
                if (message.has("error")) {
                    errors.incrementAndGet();
                    String code =
                            message.path("error").path("data").path("code").asText();
                    if (!code.equals("cancelled") && !code.equals("shut_down") && firstProblems.size() < 100) {
                        firstProblems.add(code + ": "
                                + message.path("error").path("message").asText());
                    }
                }
                if (future != null) {
                    future.complete(message);
                }
            }
        } catch (IOException e) {
            firstProblems.add("reading the bridge failed: " + e);
        }
    }

    // --- samples -------------------------------------------------------------------------------------

    /** VmRSS (kB) and Threads from /proc/PID/status; -1 where not available. */
    private static long[] procStatus(long pid) {
        long[] out = {-1, -1};
        try {
            for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                if (line.startsWith("VmRSS:")) {
                    out[0] = Long.parseLong(line.replaceAll("\\D+", ""));
                } else if (line.startsWith("Threads:")) {
                    out[1] = Long.parseLong(line.replaceAll("\\D+", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux: reported as -1
        }
        return out;
    }

    private static long openFds(long pid) {
        try (Stream<Path> fds = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            return fds.count();
        } catch (IOException e) {
            return -1;
        }
    }

    /**
     * Heap in use right after a full GC, in kB, from {@code jcmd PID GC.run} and {@code GC.heap_info}; -1 if unknown.
     */
    private static long heapAfterGc(long pid) {
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            run(jcmd.toString(), Long.toString(pid), "GC.run");
            Matcher m = HEAP_USED.matcher(run(jcmd.toString(), Long.toString(pid), "GC.heap_info"));
            return m.find() ? Long.parseLong(m.group(1)) : -1;
        } catch (IOException | InterruptedException | TimeoutException | ExecutionException e) {
            return -1;
        }
    }

    private static String run(String... command)
            throws IOException, InterruptedException, TimeoutException, ExecutionException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> {
            try {
                return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        });
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new TimeoutException(String.join(" ", command));
        }
        return output.get(5, TimeUnit.SECONDS);
    }

    private static double percentile(List<Long> sorted, double q) {
        if (sorted.isEmpty()) {
            return Double.NaN;
        }
        int index = (int) Math.min(sorted.size() - 1, Math.ceil(q * sorted.size()) - 1);
        return sorted.get(Math.max(0, index)) / 1e6;
    }

    // --- the verdict ---------------------------------------------------------------------------------

    private static final double RSS_FACTOR = 1.5;
    private static final long RSS_SLACK_KB = 96 * 1024;
    private static final double HEAP_FACTOR = 1.5;
    private static final long HEAP_SLACK_KB = 32 * 1024;
    private static final long THREAD_SLACK = 32;
    private static final long FD_SLACK = 16;
    private static final double P99_FACTOR = 3;
    private static final double P99_SLACK_MS = 50;

    private String bounds() {
        return String.format(
                "bounds (the last minute against the first after the %d-minute warm-up): RSS ≤ %.1f× + %d MB, heap after GC "
                        + "≤ %.1f× + %d MB, threads ≤ +%d, open fds ≤ +%d, turn p99 ≤ %.0f× + %.0f ms",
                warmupMinutes,
                RSS_FACTOR,
                RSS_SLACK_KB / 1024,
                HEAP_FACTOR,
                HEAP_SLACK_KB / 1024,
                THREAD_SLACK,
                FD_SLACK,
                P99_FACTOR,
                P99_SLACK_MS);
    }

    private List<String> growth(List<Sample> samples) {
        List<String> out = new ArrayList<>();
        if (samples.size() <= warmupMinutes) {
            out.add("the run ended before the warm-up was over (" + samples.size() + " samples)");
            return out;
        }
        Sample base = samples.get(warmupMinutes);
        Sample last = samples.getLast();
        if (last == base) {
            return out;
        }
        check(out, "RSS", base.rssKb(), last.rssKb(), base.rssKb() * RSS_FACTOR + RSS_SLACK_KB, "kB");
        check(out, "heap after GC", base.heapKb(), last.heapKb(), base.heapKb() * HEAP_FACTOR + HEAP_SLACK_KB, "kB");
        check(out, "live threads", base.threads(), last.threads(), base.threads() + THREAD_SLACK, "");
        check(out, "open fds", base.fds(), last.fds(), base.fds() + FD_SLACK, "");
        if (!Double.isNaN(base.p99Ms())
                && !Double.isNaN(last.p99Ms())
                && last.p99Ms() > base.p99Ms() * P99_FACTOR + P99_SLACK_MS) {
            out.add(String.format("turn p99 grew from %.1f ms to %.1f ms", base.p99Ms(), last.p99Ms()));
        }
        if (last.turns() == 0) {
            out.add("no turn finished in the last minute");
        }
        return out;
    }

    private static void check(List<String> out, String what, long base, long last, double bound, String unit) {
        if (base >= 0 && last >= 0 && last > bound) {
            out.add(what + " grew from " + base + unit + " to " + last + unit + " (bound " + (long) bound + unit + ")");
        }
    }

    private static String table(List<Sample> samples) {
        Table table = new Table(
                "minute",
                "requests",
                "turns",
                "RSS MB",
                "heap after GC MB",
                "threads",
                "fds",
                "turn p50 ms",
                "turn p99 ms",
                "error answers");
        for (Sample s : samples) {
            table.row(
                    Integer.toString(s.minute()),
                    Long.toString(s.requests()),
                    Long.toString(s.turns()),
                    Long.toString(s.rssKb() / 1024),
                    Long.toString(s.heapKb() / 1024),
                    Long.toString(s.threads()),
                    Long.toString(s.fds()),
                    String.format("%.1f", s.p50Ms()),
                    String.format("%.1f", s.p99Ms()),
                    Long.toString(s.errors()));
        }
        return table.render();
    }
}
