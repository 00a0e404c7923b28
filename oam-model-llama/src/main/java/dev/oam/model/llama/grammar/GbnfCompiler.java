package dev.oam.model.llama.grammar;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The Java implementation of {@link GrammarCompiler}: grammar trees compiled to a lazily built DFA over code points,
 * token masks from one pass over a flat trie of the vocabulary, and masks cached per grammar state.
 *
 * <p>What is shared, and bounded how:
 *
 * <ul>
 *   <li>the trie: built once here (about a second for 262k tokens; about 3 nodes per token);
 *   <li>compiled grammars (equal when their texts are), the {@value #GRAMMARS} most recently started (each interns at
 *       most {@value GbnfGrammar#MAX_STATES} DFA states);
 *   <li>vocabulary slices ({@link Slice}, after llguidance's slicer), the {@value #SLICES} most recently used: for a
 *       state that accepts any run of some code points (a JSON string body, free text), the tokens made only of those
 *       are set at once and only the rest of the vocabulary is walked;
 *   <li>masks by (grammar state, unfinished character), least recently used out past the byte budget
 *       ({@link #DEFAULT_MASK_BYTES} by default: 2,048 full masks of Gemma 3's vocabulary, more when masks are small,
 *       as they are kept as token ids when that is smaller).
 * </ul>
 *
 * Thread-safe; each {@link TokenConstraint} it starts belongs to one generation.
 */
public final class GbnfCompiler implements GrammarCompiler {
    /** The default mask budget: 64 MiB. */
    public static final long DEFAULT_MASK_BYTES = 64L << 20;

    static final int GRAMMARS = 32;
    /** Vocabulary slices kept (one per distinct set of free code points; JSON strings and free text need two). */
    static final int SLICES = 8;

    private final TokenVocabulary vocabulary;
    private final TokenTrie trie;
    private final int[] endOfGeneration;
    private final MaskCache masks;
    private final LinkedHashMap<Grammar, GbnfGrammar> grammars = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Grammar, GbnfGrammar> eldest) {
            return size() > GRAMMARS;
        }
    }; // guarded by itself
    private final LinkedHashMap<String, Slice> slices = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Slice> eldest) {
            return size() > SLICES;
        }
    }; // guarded by itself

    private GbnfCompiler(TokenVocabulary vocabulary, long maskBytes) {
        this.vocabulary = Objects.requireNonNull(vocabulary, "vocabulary");
        if (maskBytes < 0) {
            throw new IllegalArgumentException("maskBytes must not be negative");
        }
        this.trie = new TokenTrie(vocabulary);
        this.endOfGeneration = java.util.stream.IntStream.range(0, vocabulary.size())
                .filter(vocabulary::isEndOfGeneration)
                .toArray();
        this.masks = new MaskCache(maskBytes);
    }

    /** A compiler over {@code vocabulary} with the default mask budget. Builds the trie now. */
    public static GbnfCompiler create(TokenVocabulary vocabulary) {
        return new GbnfCompiler(vocabulary, DEFAULT_MASK_BYTES);
    }

    /** A compiler whose mask cache keeps at most {@code maskBytes} (0 turns caching off). */
    public static GbnfCompiler create(TokenVocabulary vocabulary, long maskBytes) {
        return new GbnfCompiler(vocabulary, maskBytes);
    }

    @Override
    public TokenConstraint start(Grammar grammar) {
        Objects.requireNonNull(grammar, "grammar");
        GbnfGrammar compiled;
        synchronized (grammars) {
            compiled = grammars.get(grammar);
        }
        if (compiled == null) {
            compiled =
                    GbnfGrammar.compile(grammar, trie.maxDepth); // outside the lock: a big grammar takes milliseconds
            synchronized (grammars) {
                GbnfGrammar raced = grammars.putIfAbsent(grammar, compiled);
                if (raced != null) {
                    compiled = raced;
                }
            }
        }
        return new GbnfConstraint(this, compiled);
    }

    /** The vocabulary the masks are over. */
    public TokenVocabulary vocabulary() {
        return vocabulary;
    }

    /** Nodes in the token trie (for benchmarks). */
    public int trieNodes() {
        return trie.size();
    }

    /** The longest piece in bytes: bounded repetitions longer than this share masks ({@code GbnfGrammar#maskKey}). */
    public int longestPiece() {
        return trie.maxDepth;
    }

    /**
     * What the caches hold, for benchmarks and logs: masks (count, bytes, hits, misses), compiled grammars and their
     * interned DFA states, and vocabulary slices.
     */
    public String cacheStats() {
        int count;
        long states = 0;
        synchronized (grammars) {
            count = grammars.size();
            for (GbnfGrammar g : grammars.values()) {
                states += g.internedStates();
            }
        }
        int sliceCount;
        synchronized (slices) {
            sliceCount = slices.size();
        }
        return masks.stats() + "; " + count + " grammars, " + states + " DFA states; " + sliceCount + " slices";
    }

    /** The slice for the free code points {@code ranges}, built on first use (a pass over the vocabulary). */
    Slice slice(int[] ranges) {
        String key = java.util.Arrays.toString(ranges);
        synchronized (slices) {
            Slice known = slices.get(key);
            if (known != null) {
                return known;
            }
        }
        Slice built = new Slice(vocabulary, ranges); // outside the lock; a race builds an equal one
        synchronized (slices) {
            Slice raced = slices.putIfAbsent(key, built);
            return raced != null ? raced : built;
        }
    }

    TokenTrie trie() {
        return trie;
    }

    MaskCache masks() {
        return masks;
    }

    int[] endOfGeneration() {
        return endOfGeneration;
    }

    @Override
    public String toString() {
        return "GbnfCompiler[" + vocabulary + ", " + trie.size() + " trie nodes, " + cacheStats() + "]";
    }
}
