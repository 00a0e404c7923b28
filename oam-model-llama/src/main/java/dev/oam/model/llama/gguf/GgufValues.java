package dev.oam.model.llama.gguf;

import java.io.IOException;
import java.util.AbstractList;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.function.IntFunction;

/**
 * The typed metadata values of a GGUF header. Integers become {@link Long}, floats {@link Double}, booleans
 * {@link Boolean}, strings {@link String}, arrays a compact unmodifiable list of those.
 */
final class GgufValues {
    // GGUF value types
    private static final int U8 = 0;
    private static final int I8 = 1;
    private static final int U16 = 2;
    private static final int I16 = 3;
    private static final int U32 = 4;
    private static final int I32 = 5;
    private static final int F32 = 6;
    private static final int BOOL = 7;
    private static final int STRING = 8;
    private static final int ARRAY = 9;
    private static final int U64 = 10;
    private static final int I64 = 11;
    private static final int F64 = 12;

    private final GgufReader in;

    GgufValues(GgufReader in) {
        this.in = in;
    }

    /** Reads the value of {@code key}, whose GGUF value type is {@code type}. */
    Object value(String key, int type) throws IOException, GgufException {
        return switch (type) {
            case U8 -> (long) (in.u8(key) & 0xFF);
            case I8 -> (long) (byte) in.u8(key);
            case U16 -> (long) (in.u16(key) & 0xFFFF);
            case I16 -> (long) (short) in.u16(key);
            case U32 -> in.u32(key);
            case I32 -> (long) (int) in.u32(key);
            case F32 -> (double) Float.intBitsToFloat((int) in.u32(key));
            case BOOL -> in.u8(key) != 0;
            case STRING -> in.string("the value of '" + key + "'");
            case U64, I64 -> in.u64(key);
            case F64 -> Double.longBitsToDouble(in.u64(key));
            case ARRAY -> array(key);
            default -> throw in.corrupt("'" + key + "' has the unknown value type " + Integer.toUnsignedString(type));
        };
    }

    private List<?> array(String key) throws IOException, GgufException {
        int type = (int) in.u32("the element type of '" + key + "'");
        if (type == ARRAY) {
            throw in.corrupt("'" + key + "' is a list of lists, which llama.cpp models do not use");
        }
        int width = switch (type) {
            case U8, I8, BOOL -> 1;
            case U16, I16 -> 2;
            case U32, I32, F32 -> 4;
            case U64, I64, F64, STRING -> 8; // a string takes at least its 8-byte length
            default ->
                throw in.corrupt("'" + key + "' is a list of the unknown value type " + Integer.toUnsignedString(type));
        };
        int n = (int) in.count(in.u64("the length of '" + key + "'"), width, "values in '" + key + "'");
        switch (type) {
            case STRING -> {
                String[] values = new String[n];
                String what = "an entry of '" + key + "'";
                for (int i = 0; i < n; i++) {
                    values[i] = in.string(what);
                }
                return new StringList(values);
            }
            case U8, I8, BOOL -> {
                byte[] v = new byte[n];
                in.read(v, "'" + key + "'");
                IntFunction<Object> get = switch (type) {
                    case U8 -> i -> (long) (v[i] & 0xFF);
                    case I8 -> i -> (long) v[i];
                    default -> i -> v[i] != 0;
                };
                return new NumberList(n, get);
            }
            case U16, I16 -> {
                short[] v = new short[n];
                for (int i = 0; i < n; i++) {
                    v[i] = (short) in.u16(key);
                }
                return new NumberList(n, type == U16 ? i -> (long) (v[i] & 0xFFFF) : i -> (long) v[i]);
            }
            case U32, I32, F32 -> {
                int[] v = new int[n];
                for (int i = 0; i < n; i++) {
                    v[i] = (int) in.u32(key);
                }
                IntFunction<Object> get = switch (type) {
                    case U32 -> i -> v[i] & 0xFFFF_FFFFL;
                    case I32 -> i -> (long) v[i];
                    default -> i -> (double) Float.intBitsToFloat(v[i]);
                };
                return new NumberList(n, get);
            }
            default -> {
                long[] v = new long[n];
                for (int i = 0; i < n; i++) {
                    v[i] = in.u64(key);
                }
                return new NumberList(n, type == F64 ? i -> Double.longBitsToDouble(v[i]) : i -> v[i]);
            }
        }
    }

    /** An unmodifiable list of strings over an array. */
    static final class StringList extends AbstractList<String> implements RandomAccess {
        private final String[] values;

        StringList(String[] values) {
            this.values = values;
        }

        @Override
        public String get(int index) {
            return values[index];
        }

        @Override
        public int size() {
            return values.length;
        }
    }

    /** An unmodifiable list over a primitive array, boxing on access so big arrays stay compact. */
    static final class NumberList extends AbstractList<Object> implements RandomAccess {
        private final int size;
        private final IntFunction<Object> get;

        NumberList(int size, IntFunction<Object> get) {
            this.size = size;
            this.get = get;
        }

        @Override
        public Object get(int index) {
            Objects.checkIndex(index, size);
            return get.apply(index);
        }

        @Override
        public int size() {
            return size;
        }
    }
}
