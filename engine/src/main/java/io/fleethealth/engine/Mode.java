package io.fleethealth.engine;

/** How a file becomes records. */
enum Mode {
    /** one record per line */
    LINES('l'),
    /** the whole file is one record (its final line end removed) */
    WHOLE('w'),
    /** a JSON file: WHOLE when pretty-printed (first line "{" or "[" and more lines), else LINES */
    JSON('j');

    final char letter;

    Mode(char letter) {
        this.letter = letter;
    }

    static Mode of(char letter) {
        for (Mode m : values()) {
            if (m.letter == letter) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown mode '" + letter + "' (l, w or j)");
    }
}
