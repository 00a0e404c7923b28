package dev.oam.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** A plain-text table: the first column left-aligned, the others right-aligned. */
final class Table {
    private final String[] header;
    private final List<String[]> rows = new ArrayList<>();

    Table(String... header) {
        this.header = header;
    }

    void row(String... cells) {
        if (cells.length != header.length) {
            throw new IllegalArgumentException("a row needs " + header.length + " cells");
        }
        rows.add(cells);
    }

    /** A latency row in microseconds plus the server's usage per request; "n/a" when missing, blank without usage. */
    void row(String label, Dist dist, Meter.Usage usage) {
        String cpu = usage == null ? "" : number(usage.cpuMicros(), 1);
        String switches = usage == null ? "" : number(usage.switches(), 2);
        String wait = usage == null ? "" : number(usage.runWaitMicros(), 1);
        if (dist == null) {
            row(label, "n/a", "n/a", "n/a", "n/a", "n/a", cpu, switches, wait);
            return;
        }
        row(
                label,
                String.format(Locale.US, "%,d", dist.count()),
                micros(dist.p50()),
                micros(dist.p90()),
                micros(dist.p99()),
                micros(dist.max()),
                cpu,
                switches,
                wait);
    }

    /** A usage row: CPU µs per item, cores busy, context switches per item, items per delivery. */
    void row(String label, Meter.Usage usage) {
        if (usage == null) {
            row(label, "n/a", "n/a", "n/a", "n/a");
            return;
        }
        row(
                label,
                number(usage.cpuMicros(), 2),
                number(usage.cores(), 2),
                number(usage.switches(), 3),
                number(usage.itemsPerDelivery(), 1));
    }

    private static String number(double value, int decimals) {
        return Double.isNaN(value) ? "-" : String.format(Locale.US, "%,." + decimals + "f", value);
    }

    private static String micros(long nanos) {
        return String.format(Locale.US, "%,.1f", nanos / 1e3);
    }

    String render() {
        int[] widths = new int[header.length];
        for (int i = 0; i < header.length; i++) {
            widths[i] = header[i].length();
            for (String[] row : rows) {
                widths[i] = Math.max(widths[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        line(out, header, widths);
        String[] rule = new String[header.length];
        for (int i = 0; i < header.length; i++) {
            rule[i] = "-".repeat(widths[i]);
        }
        line(out, rule, widths);
        for (String[] row : rows) {
            line(out, row, widths);
        }
        return out.toString();
    }

    private static void line(StringBuilder out, String[] cells, int[] widths) {
        for (int i = 0; i < cells.length; i++) {
            if (i > 0) {
                out.append("  ");
            }
            String pad = " ".repeat(widths[i] - cells[i].length());
            out.append(i == 0 ? cells[i] + pad : pad + cells[i]);
        }
        int end = out.length();
        while (end > 0 && out.charAt(end - 1) == ' ') {
            end--;
        }
        out.setLength(end);
        out.append('\n');
    }
}
