package dev.oam.model.llama.grammar;

import org.jspecify.annotations.Nullable;

/**
 * One entry of a matcher stack: the program position to match next and, below it, where to continue when the current
 * rule ends. Immutable and compared by value, so stacks built by different generations (or threads) that mean the same
 * thing are equal, which is what lets masks be cached per state.
 */
public final class Frame {
    final int pc;
    final @Nullable Frame parent;
    private final int hash;

    Frame(int pc, @Nullable Frame parent) {
        this.pc = pc;
        this.parent = parent;
        this.hash = pc * 0x9E3779B1 + (parent == null ? 0 : parent.hash * 31);
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof Frame f) || f.hash != hash) {
            return false;
        }
        Frame a = this;
        Frame b = f;
        while (a != b) {
            if (a == null || b == null || a.pc != b.pc || a.hash != b.hash) {
                return false;
            }
            a = a.parent;
            b = b.parent;
        }
        return true;
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder();
        for (Frame f = this; f != null; f = f.parent) {
            out.append(out.isEmpty() ? "" : "<").append(f.pc);
        }
        return out.toString();
    }
}
