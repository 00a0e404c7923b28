package dev.oam.core.tool;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.security.SecureRandom;

/** One call the model made: an id, the tool's name and JSON arguments. */
public record ToolCall(String id, String name, ObjectNode arguments) {
    private static final String ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A fresh id of the form {@code call_} plus random alphanumerics. */
    public static String newId() {
        StringBuilder id = new StringBuilder("call_");
        for (int i = 0; i < 24; i++) {
            id.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
        }
        return id.toString();
    }
}
