package dev.oam.core.model.pull;

import java.util.regex.Pattern;

/** The characters each part of a {@link ModelName} may hold: what the hub allows, and nothing that leaves a folder. */
final class NameRules {
    static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,95}");
    static final Pattern FILE_SEGMENT = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._+-]{0,199}");
    static final Pattern QUANT = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,31}");
    static final Pattern REVISION = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");
    static final Pattern QUANT_FORM = Pattern.compile("[^/\\s:]+/[^/\\s:]+:[^/\\s:]+");

    private NameRules() {}
}
