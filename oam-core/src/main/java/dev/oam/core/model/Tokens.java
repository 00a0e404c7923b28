package dev.oam.core.model;

import java.nio.charset.StandardCharsets;

/** A rough token estimate (about four bytes of UTF-8 a token) for models without a tokenizer. */
public final class Tokens {
    private Tokens() {}

    public static int estimate(String text) {
        if (text.isEmpty()) {
            return 0;
        }
        return (text.getBytes(StandardCharsets.UTF_8).length + 3) / 4;
    }
}
