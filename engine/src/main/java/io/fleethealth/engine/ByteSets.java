package io.fleethealth.engine;

import java.io.Serializable;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.unsafe.types.UTF8String;

/**
 * Which of a fixed set of byte strings occur in a text, each tagged with the ids (bits) it stands
 * for: one pass over the text whatever the number of strings (Aho–Corasick, the automaton's
 * transitions precomputed into a table over the strings' bytes), or a walk of its trie for the
 * strings the text starts with.
 */
final class ByteSets implements Serializable {
    private final int words;           // longs per set of ids
    private final int[] classOf;       // byte -> column of the tables (0: a byte no string holds)
    private final int classes;
    private final int[] trie;          // state * classes + class -> next state, -1 when none
    private final int[] automaton;     // same, with the failure transitions folded in
    private final long[][] exact;      // ids of the strings ending at a state (trie walk)
    private final long[][] found;      // ids of the strings ending at a state or a suffix of it

    /** `strings[k]` stands for id `ids[k]` (ids below `idCount`). */
    ByteSets(List<byte[]> strings, int[] ids, int idCount) {
        words = Math.max(1, (idCount + 63) / 64);
        classOf = new int[256];
        int next = 1;
        for (byte[] s : strings) {
            for (byte b : s) {
                if (classOf[b & 0xFF] == 0) {
                    classOf[b & 0xFF] = next++;
                }
            }
        }
        classes = next;
        List<int[]> rows = new ArrayList<>();
        List<long[]> ends = new ArrayList<>();
        rows.add(empty());
        ends.add(null);
        for (int k = 0; k < strings.size(); k++) {
            int state = 0;
            for (byte b : strings.get(k)) {
                int c = classOf[b & 0xFF];
                if (rows.get(state)[c] < 0) {
                    rows.get(state)[c] = rows.size();
                    rows.add(empty());
                    ends.add(null);
                }
                state = rows.get(state)[c];
            }
            if (ends.get(state) == null) {
                ends.set(state, new long[words]);
            }
            ends.get(state)[ids[k] >>> 6] |= 1L << (ids[k] & 63);
        }
        int states = rows.size();
        trie = new int[states * classes];
        exact = new long[states][];
        for (int s = 0; s < states; s++) {
            System.arraycopy(rows.get(s), 0, trie, s * classes, classes);
            exact[s] = ends.get(s);
        }
        // breadth first: a state's failure is the longest proper suffix of its text that is a state
        automaton = new int[states * classes];
        found = new long[states][];
        int[] failure = new int[states];
        ArrayDeque<Integer> queue = new ArrayDeque<>();
        for (int c = 0; c < classes; c++) {
            int t = trie[c];
            automaton[c] = t < 0 ? 0 : t;
            if (t > 0) {
                failure[t] = 0;
                queue.add(t);
            }
        }
        found[0] = exact[0];
        while (!queue.isEmpty()) {
            int s = queue.poll();
            found[s] = union(exact[s], found[failure[s]]);
            for (int c = 0; c < classes; c++) {
                int t = trie[s * classes + c];
                if (t < 0) {
                    automaton[s * classes + c] = automaton[failure[s] * classes + c];
                } else {
                    automaton[s * classes + c] = t;
                    failure[t] = automaton[failure[s] * classes + c];
                    queue.add(t);
                }
            }
        }
    }

    private int[] empty() {
        int[] row = new int[classes];
        Arrays.fill(row, -1);
        return row;
    }

    private static long[] union(long[] a, long[] b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        long[] out = a.clone();
        for (int i = 0; i < out.length; i++) {
            out[i] |= b[i];
        }
        return out;
    }

    /** ORs into `ids` the ids of every string that occurs in `text`. */
    void occurIn(UTF8String text, long[] ids) {
        int state = 0;
        int n = text.numBytes();
        for (int i = 0; i < n; i++) {
            state = automaton[state * classes + classOf[text.getByte(i) & 0xFF]];
            long[] hit = found[state];
            if (hit != null) {
                or(ids, hit);
            }
        }
    }

    /** ORs into `ids` the ids of every string that `text` starts with. */
    void startOf(UTF8String text, long[] ids) {
        int state = 0;
        int n = text.numBytes();
        for (int i = 0; i < n; i++) {
            int c = classOf[text.getByte(i) & 0xFF];
            state = c == 0 ? -1 : trie[state * classes + c];
            if (state < 0) {
                return;
            }
            if (exact[state] != null) {
                or(ids, exact[state]);
            }
        }
    }

    int words() {
        return words;
    }

    private static void or(long[] into, long[] bits) {
        for (int i = 0; i < into.length; i++) {
            into[i] |= bits[i];
        }
    }
}
