package dev.oam.model.llama.grammar;

import java.util.Arrays;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Token masks by grammar state, least recently used first out once their total size passes a byte budget. A mask with
 * few tokens is kept as their ids (4 bytes each) rather than a full bitset (n_vocab / 8 bytes: 32 KiB for Gemma 3), as
 * structural positions allow a handful of tokens.
 *
 * <p>Thread-safe: one lock around the map. A hit costs a hash lookup plus the copy into the caller's array, which is
 * done outside the lock (entries are immutable).
 */
public final class MaskCache {
    /** The key: a state of one compiled grammar plus the bytes of an unfinished character. */
    record Key(GrammarState state, int pending) {}

    /** An immutable mask: either {@code words} (a bitset) or {@code ids} (sorted token ids). */
    static final class Mask {
        private final long @Nullable [] words;
        private final int @Nullable [] ids;

        private Mask(long @Nullable [] words, int @Nullable [] ids) {
            this.words = words;
            this.ids = ids;
        }

        /** The compact copy of {@code mask} (its first {@code words} longs). */
        static Mask of(long[] mask, int words) {
            int bits = 0;
            for (int i = 0; i < words; i++) {
                bits += Long.bitCount(mask[i]);
            }
            if ((long) bits * 32 < (long) words * 64) {
                int[] ids = new int[bits];
                int k = 0;
                for (int i = 0; i < words; i++) {
                    for (long w = mask[i]; w != 0; w &= w - 1) {
                        ids[k++] = (i << 6) + Long.numberOfTrailingZeros(w);
                    }
                }
                return new Mask(null, ids);
            }
            return new Mask(Arrays.copyOf(mask, words), null);
        }

        /** Writes the mask into {@code out}, clearing every other bit. */
        void copyTo(long[] out) {
            if (words != null) {
                System.arraycopy(words, 0, out, 0, words.length);
                Arrays.fill(out, words.length, out.length, 0L);
            } else {
                Arrays.fill(out, 0L);
                for (int id : ids) {
                    out[id >>> 6] |= 1L << id;
                }
            }
        }

        long bytes() {
            return 48L + (words != null ? 8L * words.length : 4L * ids.length);
        }
    }

    private final long capacity;
    private final LinkedHashMap<Key, Mask> map = new LinkedHashMap<>(256, 0.75f, true); // guarded by this
    private long bytes; // guarded by this
    private long hits; // guarded by this
    private long misses; // guarded by this

    MaskCache(long capacityBytes) {
        this.capacity = capacityBytes;
    }

    synchronized @Nullable Mask get(Key key) {
        Mask mask = map.get(key);
        if (mask == null) {
            misses++;
        } else {
            hits++;
        }
        return mask;
    }

    synchronized void put(Key key, Mask mask) {
        if (mask.bytes() > capacity) {
            return;
        }
        Mask old = map.put(key, mask);
        bytes += mask.bytes() - (old == null ? 0 : old.bytes());
        for (Iterator<Map.Entry<Key, Mask>> it = map.entrySet().iterator(); bytes > capacity && it.hasNext(); ) {
            bytes -= it.next().getValue().bytes();
            it.remove();
        }
    }

    synchronized long bytes() {
        return bytes;
    }

    synchronized int size() {
        return map.size();
    }

    synchronized String stats() {
        return map.size() + " masks, " + bytes + " bytes, " + hits + " hits, " + misses + " misses";
    }
}
