package dev.oam.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * {@code bench/run startup}: how long a warm {@code oam stdio} takes from the process's start to its answer to a first
 * {@code ping}, as a game engine that spawns it on every launch sees it, and where that time goes. Each case is a fresh
 * child process that is sent {@code ping} at once; the time runs from just before the process is started to the arrival
 * of the answer's line. The cases run round-robin (each round in another order), so load from other programs on the
 * machine hits them alike; the table gives the median and the spread over the rounds, and the process's own CPU time up
 * to the answer (read from {@code /proc} on Linux).
 *
 * <p>The cases, from the floor up: a JVM that answers from {@code java.base} alone; one that parses and writes the
 * answer with Jackson (the bench's echo server); {@code java -jar oam.jar stdio} without a system model and with the
 * default model (when the model cache holds it), each without and with the AOT cache; the launcher alone
 * ({@code bin/oam} with a stand-in {@code java} that answers at once); {@code bin/oam stdio}; and with
 * {@code --baseline DIR} the {@code bin/oam stdio} of another checkout (built), for before and after in one run. A
 * speed claim is a ratio of two rows of the same run.
 */
public final class StartupBench {
    private static final String PING = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
    private static final String PONG = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}";
    /** bin/oam's JVM flags, without the AOT cache (see bin/oam). */
    private static final List<String> LAUNCHER_FLAGS =
            List.of("--enable-native-access=ALL-UNNAMED", "-Xlog:disable", "-Xlog:all=warning:stderr");

    /** One way to start a server: its command, and variables to set ({@code null}: remove) on top of ours. */
    record Case(String label, List<String> command, Map<String, @Nullable String> env) {}

    private StartupBench() {}

    /** A server from {@code java.base} alone: the floor of any JVM answer. */
    public static final class Floor {
        private Floor() {}

        public static void main(String[] args) throws IOException {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                if (!line.isBlank()) {
                    System.out.println(PONG);
                    System.out.flush();
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int rounds = 11;
        Path baseline = null;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--quick" -> rounds = 3;
                case "--baseline" -> baseline = Path.of(args[++i]).toAbsolutePath();
                case "--help", "-h" -> {
                    System.err.println("""
                            bench/run startup [--rounds N] [--quick] [--baseline DIR]
                              --rounds N      measured rounds; every case runs once per round (default 11)
                              --quick         3 rounds
                              --baseline DIR  also bin/oam stdio of DIR, a built checkout (before/after in one run)
                            """);
                    return;
                }
                default -> throw new IllegalArgumentException("unknown option " + args[i] + " (see --help)");
            }
        }
        Path root = Path.of(System.getProperty("oam.bench.root", ".")).toAbsolutePath();
        Path javaHome = Path.of(System.getProperty("java.home"));
        String java = javaHome.resolve("bin/java").toString();
        Path jar = root.resolve("oam-cli/target/oam.jar");
        Path aot = root.resolve("oam-cli/target/oam.aot");
        String benchClasses = root.resolve("bench/target/classes").toString();
        if (!Files.isRegularFile(jar)) {
            throw new BenchException("no " + jar + ": build first (bench/run does)");
        }
        boolean withAot = Files.isRegularFile(aot) && Runtime.version().feature() >= 25;
        boolean defaultModel = defaultModelCached();
        Map<String, @Nullable String> noModel = Map.of(dev.oam.core.model.ModelSpec.MODEL_VARIABLE, "none");
        Map<String, @Nullable String> asUsers = new HashMap<>();
        asUsers.put(dev.oam.core.model.ModelSpec.MODEL_VARIABLE, null);
        Map<String, @Nullable String> jdk = Map.of("JAVA_HOME", javaHome.toString());

        List<Case> cases = new ArrayList<>();
        cases.add(new Case(
                "JVM alone: java.base answers", List.of(java, "-cp", benchClasses, Floor.class.getName()), Map.of()));
        cases.add(new Case(
                "JVM + Jackson: the echo server",
                List.of(java, "-cp", jar + ":" + benchClasses, EchoServer.class.getName()),
                Map.of()));
        cases.add(new Case("oam.jar stdio, no model", jarCommand(java, jar, null), noModel));
        if (withAot) {
            cases.add(new Case("oam.jar stdio, no model, AOT cache", jarCommand(java, jar, aot), noModel));
        }
        if (defaultModel) {
            cases.add(new Case("oam.jar stdio, default model", jarCommand(java, jar, null), asUsers));
            if (withAot) {
                cases.add(new Case("oam.jar stdio, default model, AOT cache", jarCommand(java, jar, aot), asUsers));
            }
        }
        Path fakeJdk = fakeJdk(root.resolve("bench/target/startup-fake-jdk"));
        cases.add(new Case(
                "bin/oam alone (a stand-in java answers)",
                List.of(root.resolve("bin/oam").toString(), "stdio"),
                Map.of("JAVA_HOME", fakeJdk.toString())));
        cases.add(new Case(
                "bin/oam stdio (this tree)", List.of(root.resolve("bin/oam").toString(), "stdio"), jdk));
        if (baseline != null) {
            cases.add(new Case(
                    "bin/oam stdio (baseline " + baseline.getFileName() + ")",
                    List.of(baseline.resolve("bin/oam").toString(), "stdio"),
                    jdk));
        }

        System.err.printf(
                Locale.ROOT,
                "startup: %d cases, 1 warm-up + %d measured rounds; JDK %s; %d CPUs; AOT cache %s; default model %s%n",
                cases.size(),
                rounds,
                Runtime.version(),
                Runtime.getRuntime().availableProcessors(),
                withAot ? "yes" : "no (needs JDK 25+ and oam-cli/target/oam.aot)",
                defaultModel ? "cached" : "not cached (its rows are left out)");
        List<List<Sample>> samples = new ArrayList<>();
        cases.forEach(c -> samples.add(new ArrayList<>()));
        for (int round = 0; round <= rounds; round++) {
            for (int k = 0; k < cases.size(); k++) {
                int index = (k + round) % cases.size(); // each round starts elsewhere
                Sample sample = once(cases.get(index));
                if (round > 0) {
                    samples.get(index).add(sample);
                }
            }
            System.err.printf(Locale.ROOT, "startup: round %d of %d done%n", round, rounds);
        }

        StringBuilder out = new StringBuilder();
        out.append(String.format(
                Locale.ROOT,
                "oam stdio start-up: process start to the first ping's answer, %d rounds, %d CPUs, JDK %s%n%n",
                rounds,
                Runtime.getRuntime().availableProcessors(),
                Runtime.version().feature()));
        out.append("| case | first ping, median | spread (min-max) | CPU to the answer, median |\n");
        out.append("|---|---:|---:|---:|\n");
        Map<String, Double> medians = new HashMap<>();
        for (int i = 0; i < cases.size(); i++) {
            List<Sample> list = samples.get(i);
            double wall = median(list.stream().mapToDouble(Sample::wallMillis).toArray());
            double min = list.stream().mapToDouble(Sample::wallMillis).min().orElse(0);
            double max = list.stream().mapToDouble(Sample::wallMillis).max().orElse(0);
            double[] cpu = list.stream()
                    .mapToDouble(Sample::cpuMillis)
                    .filter(c -> c >= 0)
                    .toArray();
            medians.put(cases.get(i).label(), wall);
            out.append(String.format(
                    Locale.ROOT,
                    "| %s | %.0f ms | %.0f-%.0f ms | %s |%n",
                    cases.get(i).label(),
                    wall,
                    min,
                    max,
                    cpu.length == 0 ? "n/a" : String.format(Locale.ROOT, "%.0f ms", median(cpu))));
        }
        if (baseline != null) {
            double before = medians.get("bin/oam stdio (baseline " + baseline.getFileName() + ")");
            double after = medians.get("bin/oam stdio (this tree)");
            out.append(String.format(
                    Locale.ROOT,
                    "%nbin/oam stdio, this tree / baseline: %.2f (%.0f ms against %.0f ms; < 1: this tree answers"
                            + " sooner)%n",
                    after / before,
                    after,
                    before));
        }
        System.out.print(out);
    }

    /** {@code java … -jar oam.jar stdio} as bin/oam starts it, with the AOT cache when {@code aot} is given. */
    private static List<String> jarCommand(String java, Path jar, @Nullable Path aot) {
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(LAUNCHER_FLAGS);
        if (aot != null) {
            command.addAll(List.of("-XX:AOTCache=" + aot, "-Xlog:aot*=off:stderr", "-Xlog:cds*=off:stderr"));
        }
        command.addAll(List.of("-jar", jar.toString(), "stdio"));
        return command;
    }

    /** A JDK folder whose {@code bin/java} answers the ping at once: what bin/oam costs before its JVM starts. */
    private static Path fakeJdk(Path dir) throws IOException {
        Files.createDirectories(dir.resolve("bin"));
        Files.writeString(dir.resolve("release"), "JAVA_VERSION=\"25\"\n");
        Path java = dir.resolve("bin/java");
        Files.writeString(java, "#!/bin/sh\nread line\necho '" + PONG + "'\nexec cat >/dev/null\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        return dir;
    }

    /** Whether the model cache holds the default model: only then does a plain start load it. */
    private static boolean defaultModelCached() {
        String cache = System.getenv(dev.oam.core.model.pull.ModelCache.CACHE_VARIABLE);
        Path root = cache != null && !cache.isBlank()
                ? Path.of(cache)
                : Path.of(System.getProperty("user.home"), ".cache", "oam", "models");
        return Files.isRegularFile(root.resolve("SmolLM2-135M-Instruct.Q4_1.gguf"))
                && Files.isRegularFile(root.resolve("SmolLM2-135M-Instruct.Q4_1.gguf.sha256-ok"));
    }

    record Sample(double wallMillis, double cpuMillis) {}

    private static Sample once(Case c) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(c.command()).redirectError(ProcessBuilder.Redirect.DISCARD);
        c.env().forEach((name, value) -> {
            if (value == null) {
                builder.environment().remove(name);
            } else {
                builder.environment().put(name, value);
            }
        });
        long start = System.nanoTime();
        Process process = builder.start();
        Children.register(process);
        try {
            OutputStream stdin = process.getOutputStream();
            stdin.write((PING + "\n").getBytes(StandardCharsets.UTF_8));
            stdin.flush();
            BufferedReader stdout =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            CompletableFuture<String> first = CompletableFuture.supplyAsync(() -> {
                try {
                    return stdout.readLine();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            String line;
            try {
                line = first.get(60, TimeUnit.SECONDS);
            } catch (TimeoutException | ExecutionException e) {
                throw new BenchException(c.label() + ": no answer to ping within 60 s (" + e + ")");
            }
            long answered = System.nanoTime();
            double cpu = cpuMillis(process.pid());
            if (line == null || !line.contains("\"result\"")) {
                throw new BenchException(c.label() + ": the first line was not ping's answer: " + line);
            }
            stdin.close();
            return new Sample((answered - start) / 1e6, cpu);
        } finally {
            Children.stop(process, Duration.ofSeconds(10).toMillis());
        }
    }

    /** utime + stime of a live process from /proc (Linux), in ms; -1 elsewhere. */
    private static double cpuMillis(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            long ticks = Long.parseLong(fields[11]) + Long.parseLong(fields[12]); // utime, stime (fields 14, 15)
            return ticks * 10.0; // USER_HZ is 100 on Linux
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    private static double median(double[] values) {
        if (values.length == 0) {
            return 0;
        }
        double[] sorted = values.clone();
        java.util.Arrays.sort(sorted);
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }
}
