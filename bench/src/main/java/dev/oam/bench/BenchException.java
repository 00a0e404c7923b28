package dev.oam.bench;

/** A measurement could not be completed (timeout, a crashed child, an unexpected answer). */
final class BenchException extends Exception {
    private static final long serialVersionUID = 1L;

    BenchException(String message) {
        super(message);
    }
}
