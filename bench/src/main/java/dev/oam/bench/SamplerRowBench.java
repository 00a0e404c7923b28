package dev.oam.bench;

import dev.oam.model.llama.engine.SamplerExtras;
import dev.oam.model.llama.engine.TokenSampler;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * {@code bench/run sampler-row}: what the FFM engine's Java sampler costs per logits row of Gemma 3's size (262,144
 * entries), next to a greedy pick of the same row (issue 38, point 1). Rows are synthetic: Gaussian logits (standard
 * deviation 2.5) with 20 peaks 12 to 19 above the mean, a shape with a long tail, harder than a trained model's. Each
 * measurement copies the row (as the engine copies it out of llama.cpp) and picks a token; the variants run in turn,
 * {@code --rounds} times, and the report gives each one's mean per row and its ratio to greedy in the same round.
 */
public final class SamplerRowBench {
    private SamplerRowBench() {}

    public static void main(String[] args) {
        int rounds = 5;
        int rows = 200;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--rows" -> rows = Integer.parseInt(args[++i]);
                default -> {
                    System.err.println("usage: bench/run sampler-row [--rounds 5] [--rows 200]");
                    System.exit(2);
                }
            }
        }
        int n = 262_144;
        SplittableRandom gen = new SplittableRandom(1);
        float[][] logits = new float[8][n];
        for (float[] row : logits) {
            for (int i = 0; i < n; i++) {
                row[i] = (float) (gen.nextGaussian() * 2.5);
            }
            for (int k = 0; k < 20; k++) {
                row[gen.nextInt(n)] = 12 + gen.nextInt(8);
            }
        }
        int[] context = new int[1500];
        for (int i = 0; i < context.length; i++) {
            context[i] = gen.nextInt(2000);
        }
        SamplerExtras dialogue =
                new SamplerExtras(0.05, 1, 1, 64, 0, 0, 0.8, 1.75, 2, -1, SamplerExtras.DEFAULT_BREAKERS, 0, 0.1);
        SamplerExtras all = new SamplerExtras(
                0.05, 0.95, 1.1, 64, 0.1, 0.1, 0.8, 1.75, 2, -1, SamplerExtras.DEFAULT_BREAKERS, 0.5, 0.1);
        String[] names = {
            "greedy (copy + arg-max)",
            "default: T 0.7, top-k 40, top-p 0.95",
            "dialogue: + min-p 0.05, DRY 0.8 (1,500-token context)",
            "every setting: + typical-p, penalties, XTC",
            "top-p 0.95 alone (no top-k)"
        };
        double[][] micros = new double[names.length][rounds];
        TokenSampler sampler = new TokenSampler();
        float[] work = new float[n];
        SplittableRandom random = new SplittableRandom(5);
        long sink = 0;
        for (int round = -1; round < rounds; round++) { // round -1 warms up
            for (int v = 0; v < names.length; v++) {
                long start = System.nanoTime();
                for (int r = 0; r < rows; r++) {
                    System.arraycopy(logits[r & 7], 0, work, 0, n);
                    sink += switch (v) {
                        case 0 -> sampler.sample(work, n, null, 0, 40, 0.95, random);
                        case 1 -> sampler.sample(work, n, null, 0.7, 40, 0.95, random);
                        case 2 -> {
                            sampler.penalize(work, n, context, context.length, dialogue, t -> t % 50 == 0);
                            yield sampler.sample(work, n, null, 0.7, 40, 0.95, dialogue, random);
                        }
                        case 3 -> {
                            sampler.penalize(work, n, context, context.length, all, t -> t % 50 == 0);
                            yield sampler.sample(work, n, null, 0.7, 40, 0.95, all, random);
                        }
                        default -> sampler.sample(work, n, null, 0.7, 0, 0.95, random);
                    };
                }
                if (round >= 0) {
                    micros[v][round] = (System.nanoTime() - start) / 1e3 / rows;
                }
            }
        }
        System.out.printf(
                Locale.ROOT,
                "%nJava sampler per 262,144-entry row, %d rows x %d rounds (load %s; checksum %d)%n%n",
                rows,
                rounds,
                load(),
                sink);
        System.out.println("| variant | µs per row (mean) | ratio to greedy (median of rounds) |");
        System.out.println("|---|---:|---:|");
        for (int v = 0; v < names.length; v++) {
            double mean = 0;
            double[] ratios = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                mean += micros[v][r] / rounds;
                ratios[r] = micros[v][r] / micros[0][r];
            }
            java.util.Arrays.sort(ratios);
            System.out.printf(Locale.ROOT, "| %s | %.0f | %.2f |%n", names[v], mean, ratios[rounds / 2]);
        }
    }

    private static String load() {
        try {
            return java.nio.file.Files.readString(java.nio.file.Path.of("/proc/loadavg"))
                    .split(" ")[0];
        } catch (java.io.IOException e) {
            return "?";
        }
    }
}
