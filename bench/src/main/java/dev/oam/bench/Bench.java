package dev.oam.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.oam.core.json.Json;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * The benchmark harness (not a test): throughput and latency of the bridge over stdio and in-process, next to a
 * parse-and-echo baseline that does the same framing and JSON work without the bridge. Progress goes to stderr; the
 * table goes to stdout. Run it with {@code bench/run}.
 *
 * <p>The bridge and its baseline are measured <em>interleaved</em> (alternating rounds, alternating latency blocks), so
 * that load from other programs on the machine hits both alike; ratios are taken per pair of rounds.
 */
public final class Bench {
    /** JVM options for the children the bench starts (e.g. for profiling); default none. */
    static final String CHILD_OPTS_VARIABLE = "OAM_BENCH_CHILD_OPTS";

    /** How much work each measurement does; see {@link #usage()}. */
    record Config(
            int pings,
            int warmupRounds,
            int rounds,
            int sessions,
            int turns,
            int toolWarmup,
            int toolTurns,
            int pingWarmup,
            int pingSamples,
            int blocks,
            int toolSessionTurns,
            int budgetSeconds,
            Set<Integer> sections) {
        static Config defaults() {
            return new Config(200_000, 2, 5, 32, 20_000, 1_000, 3_000, 2_000, 5_000, 10, 0, 240, Set.of());
        }

        static Config quick() {
            return new Config(20_000, 1, 1, 8, 2_000, 100, 300, 200, 500, 2, 0, 90, Set.of());
        }

        /** Sessions the sequential tool turns use (a new one every toolSessionTurns turns; 0 = one for all). */
        int toolSessionCount() {
            int total = toolWarmup + toolTurns;
            return toolSessionTurns == 0 ? 1 : (total + toolSessionTurns - 1) / toolSessionTurns;
        }

        int turnsPerToolSession() {
            return toolSessionTurns == 0 ? toolWarmup + toolTurns : toolSessionTurns;
        }
    }

    private static final String ANSWER_TEXT = "Hello there.";
    private static final long PHASE_TIMEOUT = 60_000_000_000L;
    private static final int SECTIONS = 5;

    private final Config config;
    private final Budget budget;
    private final List<String> failures = new ArrayList<>();
    private long controlIds;
    private int pingIds = 1_000_000;
    private long blackhole;
    private String loadBefore;
    private String bridgeJarName = "this build's";

    // Results; null when the measurement failed or was skipped.
    private Paired pingInProcess; // a = bridge, b = echo
    private Paired pingStdio; // a = bridge, b = echo
    private Paired turnThroughput; // a = stdio, b = in-process
    private LatencySet stdioLatency;
    private LatencySet inProcessLatency;

    /** One throughput round: items per second and the server's usage per item. */
    record Sample(double rate, Meter.Usage usage) {}

    /** Two servers measured in alternating rounds; the ratio a/b is taken per pair of rounds. */
    record Paired(Rate a, Rate b, double ratioMedian, double ratioMin, double ratioMax) {}

    /** The latency figures of one transport; every field may be null. */
    record LatencySet(Latency echoPing, Latency bridgePing, Latency toolRoundTrip, Latency toolTurn) {}

    /** A latency distribution in time order of the samples, with the server's usage per request. */
    record Latency(long[] samples, Meter.Usage usage) {
        Dist all() {
            return Dist.of(samples);
        }

        Dist first() {
            return Dist.of(samples, 0, Math.max(1, samples.length / 10));
        }

        Dist last() {
            return Dist.of(samples, samples.length - Math.max(1, samples.length / 10), samples.length);
        }
    }

    @FunctionalInterface
    private interface Section {
        void run() throws Exception;
    }

    @FunctionalInterface
    private interface Round {
        Sample run(int round) throws BenchException;
    }

    private Bench(Config config) {
        this.config = config;
        this.budget = new Budget(config.budgetSeconds());
    }

    public static void main(String[] args) {
        Config config;
        try {
            config = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("bench: " + e.getMessage());
            System.err.println(usage());
            System.exit(2);
            return;
        }
        if (config == null) {
            System.out.println(usage());
            return;
        }
        Runtime.getRuntime().addShutdownHook(new Thread(Children::destroyAll, "bench-cleanup"));
        int code = 1;
        try {
            code = new Bench(config).run();
        } catch (Exception e) {
            System.err.println("bench: " + e);
        } finally {
            Children.destroyAll();
        }
        System.exit(code);
    }

    static String usage() {
        Config d = Config.defaults();
        return String.join(
                "\n",
                "usage: bench/run [--quick] [--sections LIST] [--pings N] [--warmup-rounds N] [--rounds N] [--sessions N]",
                "                 [--turns N] [--tool-warmup N] [--tool-turns N] [--tool-session-turns N] [--ping-warmup N]",
                "                 [--ping-samples N] [--blocks N] [--budget SECONDS]",
                "  --quick            small sizes for a smoke run (~30 s)",
                "  --sections LIST    run only these sections, e.g. 2,4 (1 in-process pings, 2 stdio pings,",
                "                     3 text turns, 4 stdio latency, 5 in-process latency; default all)",
                "  --pings N          pipelined pings per throughput round (" + d.pings() + ")",
                "  --warmup-rounds N  unmeasured rounds before the measured ones (" + d.warmupRounds() + ")",
                "  --rounds N         measured rounds per server; the table shows their median (" + d.rounds() + ")",
                "  --sessions N       sessions the text turns are spread over (" + d.sessions() + ")",
                "  --turns N          pipelined session/respond per turn round (" + d.turns() + ")",
                "  --tool-warmup N    unmeasured sequential tool turns (" + d.toolWarmup() + ")",
                "  --tool-turns N     measured sequential tool turns (" + d.toolTurns() + ")",
                "  --tool-session-turns N  a fresh tool session every N turns (0 = one session for all; "
                        + d.toolSessionTurns() + ")",
                "  --ping-warmup N    unmeasured sequential pings per server (" + d.pingWarmup() + ")",
                "  --ping-samples N   measured sequential pings per server (" + d.pingSamples() + ")",
                "  --blocks N         latency samples are taken in N interleaved blocks per kind (" + d.blocks() + ")",
                "  --budget SECONDS   hard limit for the whole run; later sections are skipped (" + d.budgetSeconds()
                        + ")",
                "Children get the JVM options in OAM_BENCH_CHILD_OPTS (e.g. for profiling); default none.",
                "OAM_BENCH_BRIDGE_JAR runs the bridge child from another oam.jar (e.g. a build of main, for before/after).",
                "OAM_BENCH_TRACE_WAITS=1 reads the run-queue wait around every stdio tool round trip (tail vs p50; slows the turns).");
    }

    static Config parse(String[] args) {
        Config c = Config.defaults();
        for (String arg : args) {
            if (arg.equals("--quick")) {
                c = Config.quick();
            }
        }
        List<String> names = List.of(
                "--pings",
                "--warmup-rounds",
                "--rounds",
                "--sessions",
                "--turns",
                "--tool-warmup",
                "--tool-turns",
                "--ping-warmup",
                "--ping-samples",
                "--blocks",
                "--tool-session-turns",
                "--budget");
        Set<String> zeroOk = Set.of("--warmup-rounds", "--tool-warmup", "--ping-warmup", "--tool-session-turns");
        int[] v = {
            c.pings(),
            c.warmupRounds(),
            c.rounds(),
            c.sessions(),
            c.turns(),
            c.toolWarmup(),
            c.toolTurns(),
            c.pingWarmup(),
            c.pingSamples(),
            c.blocks(),
            c.toolSessionTurns(),
            c.budgetSeconds()
        };
        Set<Integer> sections = Set.of();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (arg.equals("--quick")) {
                continue;
            }
            if (arg.equals("-h") || arg.equals("--help")) {
                return null;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(
                        names.contains(arg) || arg.equals("--sections")
                                ? arg + " needs a value"
                                : "unknown option " + arg);
            }
            if (arg.equals("--sections")) {
                Set<Integer> chosen = new TreeSet<>();
                for (String part : args[++i].split(",")) {
                    try {
                        int n = Integer.parseInt(part.trim());
                        if (n < 1 || n > SECTIONS) {
                            throw new NumberFormatException();
                        }
                        chosen.add(n);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(
                                "--sections takes numbers 1-" + SECTIONS + " separated by commas, not " + args[i]);
                    }
                }
                sections = Set.copyOf(chosen);
                continue;
            }
            int index = names.indexOf(arg);
            if (index < 0) {
                throw new IllegalArgumentException("unknown option " + arg);
            }
            try {
                v[index] = Integer.parseInt(args[++i]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(arg + " needs a whole number, not " + args[i]);
            }
            if (v[index] < (zeroOk.contains(arg) ? 0 : 1) || v[index] > 10_000_000) {
                throw new IllegalArgumentException(arg + " is out of range");
            }
        }
        if (v[3] > 60) {
            throw new IllegalArgumentException("--sessions must be at most 60 (the bridge's default limit is 64)");
        }
        Config parsed = new Config(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], sections);
        if (parsed.toolSessionCount() > 60) {
            throw new IllegalArgumentException(
                    "--tool-session-turns is too small: the tool turns would need more than 60 sessions");
        }
        if (parsed.blocks() > Math.min(parsed.pingSamples(), parsed.toolTurns())) {
            throw new IllegalArgumentException("--blocks must not exceed --ping-samples or --tool-turns");
        }
        return parsed;
    }

    // --- the run ---------------------------------------------------------------------------------

    private int run() throws IOException {
        Path root = Path.of(System.getProperty("oam.bench.root", "."))
                .toAbsolutePath()
                .normalize();
        Path jar = root.resolve("oam-cli/target/oam.jar");
        Path classes = root.resolve("bench/target/classes");
        String otherJar =
                System.getenv().getOrDefault("OAM_BENCH_BRIDGE_JAR", "").trim();
        Path bridgeJar = otherJar.isEmpty() ? jar : Path.of(otherJar).toAbsolutePath();
        if (!Files.isRegularFile(bridgeJar)) {
            System.err.println("bench: OAM_BENCH_BRIDGE_JAR " + bridgeJar + " is not a file.");
            return 2;
        }
        if (!Files.isRegularFile(jar) || !Files.isDirectory(classes)) {
            System.err.println("bench: " + jar + " or " + classes + " is missing; build first (bench/run does).");
            return 2;
        }
        Path logs = root.resolve("bench/target/logs");
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String extra = System.getenv().getOrDefault(CHILD_OPTS_VARIABLE, "").trim();
        List<String> childOptions = extra.isEmpty() ? List.of() : Arrays.asList(extra.split("\\s+"));
        List<String> bridge = new ArrayList<>(List.of(javaBin));
        bridge.addAll(childOptions);
        bridge.addAll(List.of("-jar", bridgeJar.toString(), "stdio"));
        bridgeJarName = bridgeJar.equals(jar) ? "this build's" : bridgeJar.toString();
        List<String> echo = new ArrayList<>(List.of(javaBin));
        echo.addAll(childOptions);
        echo.addAll(List.of("-cp", jar + java.io.File.pathSeparator + classes, EchoServer.class.getName()));

        progress("sizes: " + sizes());
        loadBefore = Meter.loadAverage();
        if (loadBefore != null) {
            progress("load average before the run: " + loadBefore);
        }
        String[] pings = pingLines(config.pings(), 1);

        section(1, "ping throughput, in-process: bridge and echo in alternating rounds", () -> {
            try (InProcessChannel channel = new InProcessChannel("inproc-ping")) {
                ready(channel);
                pingInProcess = paired(
                        "bridge", round -> pingRound(channel, pings), "echo", round -> echoRound(pings), "msg/s");
            }
        });
        section(2, "ping throughput, stdio: bridge and echo children in alternating rounds", () -> {
            try (StdioChannel bridgeChannel = new StdioChannel("bridge", bridge, logs.resolve("bridge-ping.log"));
                    StdioChannel echoChannel = new StdioChannel("echo", echo, logs.resolve("echo-ping.log"))) {
                ready(bridgeChannel);
                ready(echoChannel);
                pingStdio = paired(
                        "bridge",
                        round -> pingRound(bridgeChannel, pings),
                        "echo",
                        round -> pingRound(echoChannel, pings),
                        "msg/s");
            }
        });
        section(3, "scripted text turns: stdio and in-process in alternating rounds", () -> {
            try (StdioChannel stdio = new StdioChannel("bridge", bridge, logs.resolve("bridge-turns.log"));
                    InProcessChannel inProcess = new InProcessChannel("inproc-turns")) {
                ready(stdio);
                ready(inProcess);
                turnThroughput = paired(
                        "stdio",
                        round -> turnRound(stdio, round),
                        "in-process",
                        round -> turnRound(inProcess, round),
                        "turns/s");
            }
        });
        section(4, "latency, stdio: echo pings, bridge pings and bridge tool turns in interleaved blocks", () -> {
            try (StdioChannel bridgeChannel = new StdioChannel("bridge", bridge, logs.resolve("bridge-latency.log"));
                    StdioChannel echoChannel = new StdioChannel("echo", echo, logs.resolve("echo-latency.log"))) {
                ready(bridgeChannel);
                ready(echoChannel);
                stdioLatency = latency(echoChannel, bridgeChannel);
                traceReport(logs);
                writeTimedTrips(logs);
            }
        });
        section(
                5,
                "latency, in-process: echo parse+serialize, bridge pings and bridge tool turns in interleaved blocks",
                () -> {
                    try (InProcessChannel channel = new InProcessChannel("inproc-latency")) {
                        ready(channel);
                        inProcessLatency = latency(null, channel);
                    }
                });

        System.out.print(report(childOptions));
        System.out.flush();
        if (blackhole == 42) {
            System.err.println();
        }
        return failures.isEmpty() ? 0 : 1;
    }

    private void section(int number, String name, Section body) {
        if (!config.sections().isEmpty() && !config.sections().contains(number)) {
            return;
        }
        String title = number + "/" + SECTIONS + " " + name;
        if (budget.exhausted()) {
            failures.add(title + ": skipped, the time budget (" + config.budgetSeconds() + " s) is used up");
            progress("skipped " + title);
            return;
        }
        progress(title);
        long start = System.nanoTime();
        try {
            body.run();
            progress(String.format(Locale.ROOT, "   done in %.1f s", (System.nanoTime() - start) / 1e9));
        } catch (BenchException e) {
            failures.add(title + ": " + e.getMessage());
            progress("   FAILED: " + e.getMessage());
        } catch (Exception e) {
            failures.add(title + ": " + e);
            progress("   FAILED: " + e);
        }
    }

    private static void progress(String message) {
        System.err.println("bench: " + message);
    }

    private String sizes() {
        Config c = config;
        return String.format(
                Locale.US,
                "pings %,d per round; text turns %,d over %d sessions per round; rounds %d warm-up + %d measured"
                        + " per server;%n  sequential pings %,d warm-up + %,d measured per server; sequential tool turns %,d warm-up"
                        + " + %,d measured (%s); %d interleaved blocks; budget %d s",
                c.pings(),
                c.turns(),
                c.sessions(),
                c.warmupRounds(),
                c.rounds(),
                c.pingWarmup(),
                c.pingSamples(),
                c.toolWarmup(),
                c.toolTurns(),
                c.toolSessionTurns() == 0 ? "one session" : "a fresh session every " + c.toolSessionTurns() + " turns",
                c.blocks(),
                c.budgetSeconds());
    }

    // --- helpers ---------------------------------------------------------------------------------

    /** Sends a control request with a string id and waits for its result. */
    private JsonNode call(Channel channel, String method, ObjectNode params, long timeoutNanos) throws BenchException {
        String id = "c-" + (++controlIds);
        Probes.Control control = new Probes.Control(id);
        channel.handler(control);
        ObjectNode message = Json.object();
        message.put("jsonrpc", "2.0");
        message.put("id", id);
        message.put("method", method);
        if (params != null) {
            message.set("params", params);
        }
        String line = Json.write(message);
        guard(channel, method, () -> {
            channel.send(line);
            channel.flush();
        });
        control.await(channel, budget, timeoutNanos, method);
        channel.handler(LineHandler.IGNORE);
        return control.result();
    }

    /** Waits until the server answers a ping (covers JVM start-up). */
    private void ready(Channel channel) throws BenchException {
        call(channel, "ping", null, 30_000_000_000L);
    }

    /**
     * Runs a client action that writes to the channel; a write failure (the child died) becomes a BenchException that
     * says why, with the child's stderr.
     */
    private static void guard(Channel channel, String what, Runnable action) throws BenchException {
        try {
            action.run();
        } catch (RuntimeException e) {
            long deadline = System.nanoTime() + 2_000_000_000L;
            while (channel.failure() == null && System.nanoTime() - deadline < 0) {
                try {
                    Thread.sleep(20);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
            throw new BenchException(what + ": sending failed ("
                    + (channel.failure() != null ? channel.failure() : e.toString()) + ")" + channel.diagnostics());
        }
    }

    static String[] pingLines(int count, int firstId) {
        String[] lines = new String[count];
        for (int i = 0; i < count; i++) {
            lines[i] = "{\"jsonrpc\":\"2.0\",\"id\":" + (firstId + i) + ",\"method\":\"ping\"}";
        }
        return lines;
    }

    private void checkBudget(String what) throws BenchException {
        if (budget.exhausted()) {
            throw new BenchException(what + ": the time budget (" + config.budgetSeconds() + " s) is used up");
        }
    }

    /** Sends every line from one writer thread, then flushes; a failure fails the probe. */
    private static Thread sendAll(Channel channel, String[] lines, Probe probe) {
        return Thread.ofPlatform().daemon().name("bench-writer").start(() -> {
            try {
                for (String line : lines) {
                    channel.send(line);
                }
                channel.flush();
            } catch (RuntimeException e) {
                probe.fail("sending failed: " + e);
            }
        });
    }

    private static void join(Thread thread) throws BenchException {
        try {
            thread.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new BenchException("interrupted");
        }
        if (thread.isAlive()) {
            throw new BenchException("the writer thread did not finish");
        }
    }

    // --- throughput ------------------------------------------------------------------------------

    /**
     * Runs warm-up and measured rounds of {@code a} and {@code b} alternately (a b, b a, a b, …, so neither always goes
     * first) and pairs each measured round of a with the round of b next to it.
     */
    private Paired paired(String aName, Round a, String bName, Round b, String unit) throws BenchException {
        int rounds = config.rounds();
        double[] aRates = new double[rounds];
        double[] bRates = new double[rounds];
        Meter.Usage[] aUsage = new Meter.Usage[rounds];
        Meter.Usage[] bUsage = new Meter.Usage[rounds];
        double[] ratios = new double[rounds];
        for (int round = 0; round < config.warmupRounds() + rounds; round++) {
            checkBudget("round " + (round + 1));
            boolean warm = round < config.warmupRounds();
            Sample sa;
            Sample sb;
            if (round % 2 == 0) {
                sa = a.run(round);
                sb = b.run(round);
            } else {
                sb = b.run(round);
                sa = a.run(round);
            }
            progress(String.format(
                    Locale.US,
                    "   %s round %d: %s %,.0f %s (CPU %.2f µs, %.3f ctx sw per item), %s %,.0f %s (CPU %.2f µs, %.3f ctx sw)",
                    warm ? "warm-up" : "measured",
                    round + 1,
                    aName,
                    sa.rate(),
                    unit,
                    sa.usage().cpuMicros(),
                    sa.usage().switches(),
                    bName,
                    sb.rate(),
                    unit,
                    sb.usage().cpuMicros(),
                    sb.usage().switches()));
            if (!warm) {
                int m = round - config.warmupRounds();
                aRates[m] = sa.rate();
                bRates[m] = sb.rate();
                aUsage[m] = sa.usage();
                bUsage[m] = sb.usage();
                ratios[m] = sa.rate() / sb.rate();
            }
        }
        Rate ratio = Rate.of(ratios, 0, new Meter.Usage[0]);
        return new Paired(
                Rate.of(aRates, 0, aUsage), Rate.of(bRates, 0, bUsage), ratio.median(), ratio.min(), ratio.max());
    }

    /** One round of pipelined pings: a writer thread sends them all while the delivery thread counts answers. */
    private Sample pingRound(Channel channel, String[] lines) throws BenchException {
        Probes.Counter counter = new Probes.Counter(lines.length);
        channel.handler(counter);
        Meter.Reading before = channel.reading();
        long start = System.nanoTime();
        Thread writer = sendAll(channel, lines, counter);
        counter.await(channel, budget, PHASE_TIMEOUT, channel.name() + " ping round");
        join(writer);
        Meter.Reading after = channel.reading();
        channel.handler(LineHandler.IGNORE);
        return new Sample(lines.length / ((counter.lastNanos() - start) / 1e9), before.perItem(after, lines.length));
    }

    /** One round of the in-process baseline: parse each line and serialize its answer, in a loop on one thread. */
    private Sample echoRound(String[] lines) {
        long pid = ProcessHandle.current().pid();
        Meter.Reading before =
                new Meter.Reading(Meter.ownCpuNanos(), Meter.contextSwitches(pid), -1, System.nanoTime());
        long start = System.nanoTime();
        long sum = 0;
        for (String line : lines) {
            sum += EchoServer.answer(line).length();
        }
        long elapsed = System.nanoTime() - start;
        Meter.Reading after = new Meter.Reading(Meter.ownCpuNanos(), Meter.contextSwitches(pid), -1, System.nanoTime());
        blackhole += sum;
        return new Sample(lines.length / (elapsed / 1e9), before.perItem(after, lines.length));
    }

    /** One round of pipelined scripted text turns, spread round-robin over fresh sessions (deleted afterwards). */
    private Sample turnRound(Channel channel, int round) throws BenchException {
        int turns = config.turns();
        int sessions = config.sessions();
        String[] names = new String[sessions];
        for (int i = 0; i < sessions; i++) {
            names[i] = "r" + round + "-s" + i;
            ObjectNode params = Json.object();
            params.put("session", names[i]);
            ObjectNode model = params.putObject("model");
            model.put("type", "scripted");
            model.putObject("fallback").put("text", ANSWER_TEXT);
            call(channel, "session/create", params, PHASE_TIMEOUT);
        }
        String[] lines = new String[turns];
        for (int j = 0; j < turns; j++) {
            lines[j] = "{\"jsonrpc\":\"2.0\",\"id\":" + (j + 1)
                    + ",\"method\":\"session/respond\",\"params\":{\"session\":\"" + names[j % sessions]
                    + "\",\"prompt\":\"hi\",\"stream\":false}}";
        }
        Probes.Counter counter = new Probes.Counter(turns);
        channel.handler(counter);
        Meter.Reading before = channel.reading();
        long start = System.nanoTime();
        Thread writer = sendAll(channel, lines, counter);
        counter.await(channel, budget, PHASE_TIMEOUT, channel.name() + " turn round");
        join(writer);
        Meter.Reading after = channel.reading();
        channel.handler(LineHandler.IGNORE);
        for (String name : names) {
            ObjectNode params = Json.object();
            params.put("session", name);
            call(channel, "session/delete", params, PHASE_TIMEOUT);
        }
        return new Sample(turns / ((counter.lastNanos() - start) / 1e9), before.perItem(after, turns));
    }

    // --- latency ---------------------------------------------------------------------------------

    /** Samples in time order plus the server's counters over the blocks they were taken in. */
    private static final class Collector {
        private final long[] samples;
        private int count;
        private final Meter.Totals totals = new Meter.Totals();

        Collector(int capacity) {
            samples = new long[capacity];
        }

        void add(long[] block) {
            System.arraycopy(block, 0, samples, count, block.length);
            count += block.length;
        }

        Latency latency(boolean withUsage) {
            long[] taken = Arrays.copyOf(samples, count);
            return new Latency(taken, withUsage ? totals.perItem(count) : null);
        }
    }

    /**
     * Sequential latency: after warm-ups, {@code blocks} rounds of (echo pings, bridge pings, bridge tool turns),
     * rotating which goes first. {@code echo} null means the in-process baseline.
     */
    private LatencySet latency(Channel echo, Channel bridge) throws BenchException {
        int blocks = config.blocks();
        String[] sessions = createToolSessions(bridge);
        int perSession = config.turnsPerToolSession();
        Collector echoPings = new Collector(config.pingSamples());
        Collector bridgePings = new Collector(config.pingSamples());
        Collector trips = new Collector(config.toolTurns());
        Collector turns = new Collector(config.toolTurns());
        int[] nextTurn = {0};
        echo(echo, config.pingWarmup(), null);
        pings(bridge, config.pingWarmup(), null);
        tools(bridge, sessions, perSession, nextTurn, config.toolWarmup(), null, null);
        for (int block = 0; block < blocks; block++) {
            checkBudget("latency block " + (block + 1));
            int pingCount = share(config.pingSamples(), blocks, block);
            int toolCount = share(config.toolTurns(), blocks, block);
            for (int k = 0; k < 3; k++) {
                switch ((block + k) % 3) {
                    case 0 -> echo(echo, pingCount, echoPings);
                    case 1 -> pings(bridge, pingCount, bridgePings);
                    default -> tools(bridge, sessions, perSession, nextTurn, toolCount, trips, turns);
                }
            }
        }
        for (String session : sessions) {
            ObjectNode delete = Json.object();
            delete.put("session", session);
            call(bridge, "session/delete", delete, PHASE_TIMEOUT);
        }
        LatencySet set = new LatencySet(
                echoPings.latency(echo != null), bridgePings.latency(true), trips.latency(false), turns.latency(true));
        progress(String.format(
                Locale.US,
                "   echo ping p50 %.1f µs p99 %.1f µs; bridge ping p50 %.1f µs p99 %.1f µs;"
                        + " tool round trip p50 %.1f µs p99 %.1f µs; whole tool turn p50 %.1f µs p99 %.1f µs",
                set.echoPing().all().p50() / 1e3,
                set.echoPing().all().p99() / 1e3,
                set.bridgePing().all().p50() / 1e3,
                set.bridgePing().all().p99() / 1e3,
                set.toolRoundTrip().all().p50() / 1e3,
                set.toolRoundTrip().all().p99() / 1e3,
                set.toolTurn().all().p50() / 1e3,
                set.toolTurn().all().p99() / 1e3));
        return set;
    }

    private static int share(int total, int blocks, int block) {
        return total / blocks + (block < total % blocks ? 1 : 0);
    }

    /** Sequential pings on {@code channel}; the client reacts on its own thread. */
    private void pings(Channel channel, int count, Collector into) throws BenchException {
        if (count == 0) {
            return;
        }
        String[] lines = pingLines(count, pingIds);
        pingIds += count;
        channel.clientThreadDelivery(true);
        try {
            Probes.PingLatency probe = new Probes.PingLatency(channel, lines);
            channel.handler(probe);
            Meter.Reading before = channel.reading();
            guard(channel, channel.name() + " sequential pings", probe::start);
            probe.await(channel, budget, PHASE_TIMEOUT, channel.name() + " sequential pings");
            Meter.Reading after = channel.reading();
            if (into != null) {
                into.add(probe.samples());
                into.totals.add(before, after);
            }
        } finally {
            channel.handler(LineHandler.IGNORE);
            channel.clientThreadDelivery(false);
        }
    }

    /** Echo latency: sequential pings to the echo child, or (null) one in-process parse + serialize at a time. */
    private void echo(Channel channel, int count, Collector into) throws BenchException {
        if (channel != null) {
            pings(channel, count, into);
            return;
        }
        String[] lines = pingLines(count, pingIds);
        pingIds += count;
        long[] samples = new long[count];
        for (int i = 0; i < count; i++) {
            long start = System.nanoTime();
            String answer = EchoServer.answer(lines[i]);
            samples[i] = System.nanoTime() - start;
            blackhole += answer.length();
        }
        if (into != null) {
            into.add(samples);
        }
    }

    /**
     * {@code OAM_BENCH_TRACE_WAITS=1}: read the run-queue wait around every stdio tool round trip (see traceReport).
     */
    private static final boolean TRACE_WAITS =
            !System.getenv().getOrDefault("OAM_BENCH_TRACE_WAITS", "").isBlank();

    private final List<long[]> tracedTrips = new ArrayList<>(); // round trip, server wait, client wait (ns)

    private final List<long[]> timedTrips =
            new ArrayList<>(); // measured stdio tool trips: replied at (nanoTime), trip, turn (ns)

    /**
     * Writes every measured stdio tool round trip with the {@code System.nanoTime()} at which its reply was sent to
     * {@code bench/target/logs/tool-trips.tsv}, so slow trips can be lined up with the JVMs' own logs (GC, safepoints,
     * JIT: {@code -Xlog:...:tn}, whose time stamps are the same clock on Linux); see bench/README.md.
     */
    private void writeTimedTrips(Path logs) {
        if (timedTrips.isEmpty()) {
            return;
        }
        writeTsv(logs, "tool-trips.tsv", "replied_at_ns\ttrip_ns\tturn_ns", timedTrips);
    }

    /** Writes {@code rows} under {@code header} (tab-separated names) to {@code logs/name}; a failure is reported. */
    private void writeTsv(Path logs, String name, String header, List<long[]> rows) {
        StringBuilder tsv = new StringBuilder(header).append('\n');
        for (long[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                tsv.append(i == 0 ? "" : "\t").append(row[i]);
            }
            tsv.append('\n');
        }
        try {
            Files.writeString(logs.resolve(name), tsv);
        } catch (IOException e) {
            progress("   cannot write " + name + ": " + e);
        }
    }

    /**
     * Where the slow tool round trips lost their time: for the samples above the p99 (and, to compare, all of them),
     * the median round trip and the median run-queue wait of the bridge's threads and of the client's reading thread
     * around it. Raw samples go to {@code bench/target/logs/tool-trip-waits.tsv}.
     */
    private void traceReport(Path logs) {
        if (tracedTrips.isEmpty()) {
            return;
        }
        List<long[]> sorted = new ArrayList<>(tracedTrips);
        sorted.sort(java.util.Comparator.comparingLong(t -> t[0]));
        int n = sorted.size();
        List<long[]> tail = sorted.subList((int) Math.floor(n * 0.99), n);
        List<long[]> mid = sorted.subList(n / 2 - Math.min(n / 2, 50), Math.min(n, n / 2 + 50));
        long waited = tail.stream()
                .filter(t -> t[1] + t[2] >= (t[0] - sorted.get(n / 2)[0]) / 2)
                .count();
        progress(String.format(
                Locale.US,
                "   tool round trip waits (%d traced): around p50: trip %.1f µs, bridge threads' wait %.1f µs,"
                        + " client's %.1f µs; above p99 (%d): trip %.1f µs, bridge wait %.1f µs, client %.1f µs;"
                        + " %d of %d tail trips waited for a CPU at least half of their excess over p50",
                n,
                median(mid, 0) / 1e3,
                median(mid, 1) / 1e3,
                median(mid, 2) / 1e3,
                tail.size(),
                median(tail, 0) / 1e3,
                median(tail, 1) / 1e3,
                median(tail, 2) / 1e3,
                waited,
                tail.size()));
        writeTsv(logs, "tool-trip-waits.tsv", "trip_ns\tbridge_wait_ns\tclient_wait_ns", tracedTrips);
    }

    private static double median(List<long[]> rows, int column) {
        long[] values = rows.stream().mapToLong(t -> t[column]).sorted().toArray();
        return values.length == 0 ? Double.NaN : values[values.length / 2];
    }

    /** Sequential tool turns continuing the sessions' scripts at {@code nextTurn[0]}. */
    private void tools(
            Channel channel,
            String[] sessions,
            int perSession,
            int[] nextTurn,
            int count,
            Collector trips,
            Collector turns)
            throws BenchException {
        if (count == 0) {
            return;
        }
        channel.clientThreadDelivery(true);
        try {
            Probes.ToolTurns probe = new Probes.ToolTurns(channel, sessions, perSession, nextTurn[0], count);
            boolean trace = trips != null && TRACE_WAITS && channel instanceof StdioChannel;
            if (trace) {
                // The bridge's threads on a tool reply's path: the input thread, the writer, the virtual threads'
                // carriers.
                probe.traceWaits(
                        Meter.threadStats(((StdioChannel) channel).pid(), "oam-stdin", "oam-writer", "ForkJoinPool"));
            }
            channel.handler(probe);
            Meter.Reading before = channel.reading();
            guard(channel, channel.name() + " sequential tool turns", probe::start);
            probe.await(channel, budget, PHASE_TIMEOUT, channel.name() + " sequential tool turns");
            Meter.Reading after = channel.reading();
            nextTurn[0] += count;
            if (trips != null) {
                trips.add(probe.roundTrips());
                turns.add(probe.turns());
                turns.totals.add(before, after);
            }
            if (trips != null && channel instanceof StdioChannel) {
                for (int i = 0; i < count; i++) {
                    timedTrips.add(new long[] {probe.repliedAts()[i], probe.roundTrips()[i], probe.turns()[i]});
                }
            }
            if (trace) {
                for (int i = 0; i < count; i++) {
                    tracedTrips.add(new long[] {probe.roundTrips()[i], probe.serverWaits()[i], probe.clientWaits()[i]});
                }
            }
        } finally {
            channel.handler(LineHandler.IGNORE);
            channel.clientThreadDelivery(false);
        }
    }

    /** Sessions whose scripts alternate a tool call and a text answer, enough for every tool turn. */
    private String[] createToolSessions(Channel channel) throws BenchException {
        int total = config.toolWarmup() + config.toolTurns();
        int count = config.toolSessionCount();
        int perSession = config.turnsPerToolSession();
        String[] sessions = new String[count];
        for (int s = 0; s < count; s++) {
            sessions[s] = "tools-" + s;
            int turns = Math.min(perSession, total - s * perSession);
            ObjectNode params = Json.object();
            params.put("session", sessions[s]);
            ObjectNode tool = params.putArray("tools").addObject();
            tool.put("name", "open_gate");
            tool.put("description", "Open a gate.");
            ObjectNode schema = tool.putObject("parameters");
            schema.put("type", "object");
            schema.putObject("properties").putObject("gate").put("type", "string");
            params.putObject("options").put("toolChoice", "required");
            ObjectNode model = params.putObject("model");
            model.put("type", "scripted");
            ArrayNode steps = model.putArray("steps");
            for (int i = 0; i < turns; i++) {
                ObjectNode call = steps.addObject().putArray("toolCalls").addObject();
                call.put("name", "open_gate");
                call.putObject("arguments").put("gate", "north");
                steps.addObject().put("text", Probes.ToolTurns.ANSWER);
            }
            model.putObject("fallback").put("text", Probes.ToolTurns.ANSWER);
            call(channel, "session/create", params, PHASE_TIMEOUT);
        }
        return sessions;
    }

    // --- the report ------------------------------------------------------------------------------

    private String report(List<String> childOptions) {
        StringBuilder out = new StringBuilder();
        Runtime runtime = Runtime.getRuntime();
        out.append("\noam bench: the bridge vs a parse-and-echo baseline\n");
        out.append(String.format(
                Locale.US,
                "JDK %s (%s), %d CPUs, %s %s, child JVM options: %s%n",
                System.getProperty("java.version"),
                System.getProperty("java.vendor"),
                runtime.availableProcessors(),
                System.getProperty("os.name"),
                System.getProperty("os.arch"),
                childOptions.isEmpty() ? "none" : String.join(" ", childOptions)));
        out.append("Bridge child: ").append(bridgeJarName).append(" oam.jar\n");
        out.append("Sizes: ").append(sizes()).append('\n');
        String loadAfter = Meter.loadAverage();
        if (loadBefore != null && loadAfter != null) {
            out.append("Load average (1/5/15 min): before ")
                    .append(loadBefore)
                    .append(", after ")
                    .append(loadAfter)
                    .append(" (the run itself adds about 1-2; more means other work shared the CPUs)\n");
        }
        out.append('\n');

        out.append(
                "Throughput (pipelined; median of the measured rounds [min-max]; the two columns ran in alternating rounds)\n");
        Table throughput = new Table("Measurement", "bridge", "echo baseline", "bridge/echo [min-max]");
        throughput.row("ping, stdio (msg/s)", rate(a(pingStdio)), rate(b(pingStdio)), pairRatio(pingStdio));
        throughput.row(
                "ping, in-process (msg/s)", rate(a(pingInProcess)), rate(b(pingInProcess)), pairRatio(pingInProcess));
        out.append(throughput.render());
        Table turns = new Table("Measurement", "stdio", "in-process", "stdio/in-process [min-max]");
        turns.row(
                "scripted text turns (turns/s)",
                rate(a(turnThroughput)),
                rate(b(turnThroughput)),
                pairRatio(turnThroughput));
        out.append(turns.render()).append('\n');

        out.append(
                "Server cost per item in those rounds (median; stdio: the child process; in-process: this whole JVM)\n");
        Table cost = new Table("Server", "CPU µs/item", "cores busy", "ctx switches/item", "items per read");
        cost.row("bridge, ping, stdio", usage(a(pingStdio)));
        cost.row("echo, ping, stdio", usage(b(pingStdio)));
        cost.row("bridge, ping, in-process", usage(a(pingInProcess)));
        cost.row("echo, parse+serialize, in-process", usage(b(pingInProcess)));
        cost.row("bridge, text turns, stdio", usage(a(turnThroughput)));
        cost.row("bridge, text turns, in-process", usage(b(turnThroughput)));
        out.append(cost.render());
        out.append("items per read = answers per pipe read on the client (stdio) or per sink flush (in-process),\n");
        out.append("i.e. how many messages the server's writer batches before it runs dry and flushes.\n\n");

        out.append(
                "Latency (sequential, one request in flight; µs; server CPU µs, context switches and run-queue wait per request)\n");
        Table latency =
                new Table("Measurement", "n", "p50", "p90", "p99", "max", "CPU µs/req", "ctx sw/req", "wait µs/req");
        LatencySet s = stdioLatency;
        LatencySet p = inProcessLatency;
        latencyRow(latency, "echo ping, stdio (baseline)", s == null ? null : s.echoPing(), false);
        latencyRow(latency, "bridge ping, stdio", s == null ? null : s.bridgePing(), false);
        latencyRow(latency, "bridge tool round trip, stdio", s == null ? null : s.toolRoundTrip(), true);
        latencyRow(latency, "bridge whole tool turn, stdio", s == null ? null : s.toolTurn(), true);
        latencyRow(latency, "echo parse+serialize, in-process (baseline)", p == null ? null : p.echoPing(), false);
        latencyRow(latency, "bridge ping, in-process", p == null ? null : p.bridgePing(), false);
        latencyRow(latency, "bridge tool round trip, in-process", p == null ? null : p.toolRoundTrip(), true);
        latencyRow(latency, "bridge whole tool turn, in-process", p == null ? null : p.toolTurn(), true);
        out.append(latency.render());
        out.append("tool round trip = the client sends its tool/call reply -> the toolCallCompleted event arrives;\n");
        out.append(
                "whole tool turn = session/respond sent -> its response arrives (the tool/call answered at once).\n");
        out.append(
                "wait = time the server's threads were ready to run but had no CPU (Linux schedstat): other load, not the server.\n");
        out.append(
                config.toolSessionTurns() == 0
                        ? "All tool turns ran on one session (its history grows by 4 entries per turn); 'first/last 10%' split them by time.\n\n"
                        : "A fresh tool session every " + config.toolSessionTurns()
                                + " turns; 'first/last 10%' split them by time.\n\n");

        out.append("Ratios and aims\n");
        Table summary = new Table("Figure", "value", "aim", "verdict");
        Double stdioRatio = pingStdio == null ? null : pingStdio.ratioMedian();
        summary.row(
                "stdio ping throughput / echo throughput",
                fixed(stdioRatio, 2),
                ">= 0.80",
                verdict(stdioRatio == null ? null : stdioRatio >= 0.8));
        summary.row(
                "in-process ping throughput / in-process echo",
                fixed(pingInProcess == null ? null : pingInProcess.ratioMedian(), 2),
                "-",
                "-");
        Double toolP99 = s == null ? null : s.toolRoundTrip().all().p99() / 1e6;
        summary.row(
                "p99 tool round trip, stdio (ms)",
                fixed(toolP99, 3),
                "< 1 ms",
                verdict(toolP99 == null ? null : toolP99 < 1.0));
        summary.row(
                "p99 tool round trip, in-process (ms)",
                fixed(p == null ? null : p.toolRoundTrip().all().p99() / 1e6, 3),
                "-",
                "-");
        summary.row(
                "p50 / p99 tool round trip over p50 / p99 echo ping, stdio",
                s == null
                        ? "n/a"
                        : fixed(
                                        (double) s.toolRoundTrip().all().p50()
                                                / s.echoPing().all().p50(),
                                        2) + " / "
                                + fixed(
                                        (double) s.toolRoundTrip().all().p99()
                                                / s.echoPing().all().p99(),
                                        2),
                "-",
                "-");
        summary.row(
                "p50 / p99 bridge ping over echo ping, stdio",
                s == null
                        ? "n/a"
                        : fixed(
                                        (double) s.bridgePing().all().p50()
                                                / s.echoPing().all().p50(),
                                        2) + " / "
                                + fixed(
                                        (double) s.bridgePing().all().p99()
                                                / s.echoPing().all().p99(),
                                        2),
                "-",
                "-");
        summary.row(
                "server CPU per ping, bridge / echo, stdio",
                fixed(
                        pingStdio == null
                                ? null
                                : pingStdio.a().usage().cpuMicros()
                                        / pingStdio.b().usage().cpuMicros(),
                        2),
                "-",
                "-");
        summary.row(
                "whole tool turn p50, last 10% / first 10%, stdio",
                fixed(
                        s == null
                                ? null
                                : (double) s.toolTurn().last().p50()
                                        / s.toolTurn().first().p50(),
                        2),
                "-",
                "-");
        out.append(summary.render());

        if (!config.sections().isEmpty()) {
            out.append("\nOnly sections ")
                    .append(new TreeSet<>(config.sections()))
                    .append(" ran (--sections); the others show n/a.\n");
        }
        if (!failures.isEmpty()) {
            out.append("\nFailures (figures shown as n/a):\n");
            failures.forEach(f -> out.append("  - ").append(f).append('\n'));
        }
        out.append(String.format(Locale.ROOT, "%nTotal time: %.1f s%n", budget.elapsedSeconds()));
        return out.toString();
    }

    private static void latencyRow(Table table, String label, Latency latency, boolean split) {
        table.row(label, latency == null ? null : latency.all(), latency == null ? null : latency.usage());
        if (split) {
            table.row("  first 10% of the turns", latency == null ? null : latency.first(), null);
            table.row("  last 10% of the turns", latency == null ? null : latency.last(), null);
        }
    }

    private static Rate a(Paired paired) {
        return paired == null ? null : paired.a();
    }

    private static Rate b(Paired paired) {
        return paired == null ? null : paired.b();
    }

    private static Meter.Usage usage(Rate rate) {
        return rate == null ? null : rate.usage();
    }

    private static String rate(Rate rate) {
        if (rate == null) {
            return "n/a";
        }
        return String.format(Locale.US, "%,.0f [%,.0f-%,.0f]", rate.median(), rate.min(), rate.max());
    }

    private static String pairRatio(Paired paired) {
        return paired == null
                ? "n/a"
                : String.format(
                        Locale.ROOT, "%.2f [%.2f-%.2f]", paired.ratioMedian(), paired.ratioMin(), paired.ratioMax());
    }

    private static String fixed(Double value, int decimals) {
        return value == null ? "n/a" : String.format(Locale.ROOT, "%." + decimals + "f", value);
    }

    private static String verdict(Boolean met) {
        return met == null ? "n/a" : met ? "met" : "MISSED";
    }
}
