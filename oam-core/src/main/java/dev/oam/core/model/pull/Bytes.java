package dev.oam.core.model.pull;

import java.util.Locale;

/** Sizes for people: {@code 93.8 MB}, {@code 512 B} (decimal units, as hubs show them). */
public final class Bytes {
    private Bytes() {}

    public static String format(long bytes) {
        if (bytes < 1000) {
            return bytes + " B";
        }
        String[] units = {"kB", "MB", "GB", "TB"};
        double value = bytes;
        int unit = -1;
        while (value >= 1000 && unit < units.length - 1) {
            value /= 1000;
            unit++;
        }
        return String.format(Locale.ROOT, value >= 100 ? "%.0f %s" : "%.1f %s", value, units[unit]);
    }
}
