package dev.oam.server;

import dev.oam.core.model.LanguageModel;
import java.util.List;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * Applies {@code stop} and the token limit to generated text as it arrives. Text that could still be the start of a
 * stop sequence is held back; at the first match, or when the text would pass {@code maxTokens}, the gate closes and
 * {@code onCut} is called once (the caller cancels the model). Not thread-safe: one model step feeds it from one
 * thread.
 */
final class TextGate {
    enum Cut {
        NONE,
        STOP,
        LENGTH
    }

    private final List<String> stops;
    private final @Nullable Integer maxTokens;
    private final LanguageModel model;
    private final Consumer<String> downstream;
    private final Runnable onCut;
    private final int longestStop;
    private final StringBuilder received = new StringBuilder();
    private int emitted;
    private Cut cut = Cut.NONE;

    TextGate(
            List<String> stops,
            @Nullable Integer maxTokens,
            LanguageModel model,
            Consumer<String> downstream,
            Runnable onCut) {
        this.stops = List.copyOf(stops);
        this.maxTokens = maxTokens;
        this.model = model;
        this.downstream = downstream;
        this.onCut = onCut;
        this.longestStop = stops.stream().mapToInt(String::length).max().orElse(0);
    }

    /** More text from the model. */
    void append(String delta) {
        if (cut != Cut.NONE || delta.isEmpty()) {
            return;
        }
        received.append(delta);
        advance(false);
    }

    /**
     * The model replaced its text. Text already sent cannot be taken back, so only a continuation of what was received
     * is followed; a different text is taken from the point where it diverges.
     */
    void reset(String whole) {
        if (cut != Cut.NONE) {
            return;
        }
        if (whole.startsWith(received.toString())) {
            append(whole.substring(received.length()));
        } else if (whole.length() > emitted && whole.startsWith(received.substring(0, emitted))) {
            received.setLength(emitted);
            append(whole.substring(emitted));
        }
    }

    /** The step ended with {@code finalText}; whatever is still held back is released. */
    void finish(String finalText) {
        if (cut != Cut.NONE) {
            return;
        }
        if (finalText.startsWith(received.toString())) {
            received.append(finalText, received.length(), finalText.length());
        }
        advance(true);
    }

    /** Everything the client gets. */
    String text() {
        return received.substring(0, emitted);
    }

    Cut cut() {
        return cut;
    }

    boolean sawText() {
        return !received.isEmpty();
    }

    private void advance(boolean last) {
        int end = received.length();
        // A token covers at least one UTF-8 byte and a char is at most three, so short text needs no count.
        if (maxTokens != null
                && (long) received.length() * 3 > maxTokens
                && model.countTokens(received.toString()) > maxTokens) {
            end = longestPrefixWithin(maxTokens);
            cut = Cut.LENGTH;
        }
        int match = firstStop(end);
        if (match >= 0) {
            end = match;
            cut = Cut.STOP;
        } else if (cut == Cut.NONE && !last) {
            end -= heldBack(end);
        }
        if (end > emitted) {
            String piece = received.substring(emitted, end);
            emitted = end;
            downstream.accept(piece);
        }
        if (cut != Cut.NONE) {
            received.setLength(emitted);
            onCut.run();
        }
    }

    /** The earliest stop sequence that lies wholly before {@code end}, or -1. */
    private int firstStop(int end) {
        if (stops.isEmpty()) {
            return -1;
        }
        int from = Math.max(0, emitted - longestStop + 1);
        String window = received.substring(from, end);
        int best = -1;
        for (String stop : stops) {
            int at = window.indexOf(stop);
            if (at >= 0 && (best < 0 || at < best)) {
                best = at;
            }
        }
        return best < 0 ? -1 : from + best;
    }

    /** How many characters at the end of {@code received[0, end)} could begin a stop sequence. */
    private int heldBack(int end) {
        int hold = 0;
        for (String stop : stops) {
            for (int length = Math.min(stop.length() - 1, end - emitted); length > hold; length--) {
                if (received.substring(end - length, end).equals(stop.substring(0, length))) {
                    hold = length;
                    break;
                }
            }
        }
        return hold;
    }

    /** The longest prefix of the received text that fits {@code limit} tokens (never splitting a surrogate pair). */
    private int longestPrefixWithin(int limit) {
        int low = emitted;
        int high = received.length();
        while (low < high) {
            int mid = (low + high + 1) >>> 1;
            if (model.countTokens(received.substring(0, mid)) <= limit) {
                low = mid;
            } else {
                high = mid - 1;
            }
        }
        if (low > emitted && low < received.length() && Character.isHighSurrogate(received.charAt(low - 1))) {
            low--;
        }
        return low;
    }
}
