package io.fleethealth.engine;

import java.io.Serializable;
import java.util.Map;

/** The options of a LineFiles read, checked once on the driver. */
final class ReadOptions implements Serializable {
    static final int DEFAULT_MAX_RECORD_BYTES = 64 << 20;

    final String[] paths;
    final Mode[] modes;
    final int maxRecordBytes;
    final int parallelism;

    private ReadOptions(String[] paths, Mode[] modes, int maxRecordBytes, int parallelism) {
        this.paths = paths;
        this.modes = modes;
        this.maxRecordBytes = maxRecordBytes;
        this.parallelism = parallelism;
    }

    static ReadOptions of(Map<String, String> options) {
        String joined = get(options, "paths", "");
        String[] paths = joined.isEmpty() ? new String[0] : joined.split("\0", -1);
        String letters = get(options, "modes", "");
        if (letters.length() != paths.length) {
            throw new IllegalArgumentException(
                    "LineFiles: " + paths.length + " paths but " + letters.length() + " modes");
        }
        Mode[] modes = new Mode[paths.length];
        for (int i = 0; i < paths.length; i++) {
            modes[i] = Mode.of(letters.charAt(i));
        }
        int max = Integer.parseInt(get(options, "max_record_bytes", String.valueOf(DEFAULT_MAX_RECORD_BYTES)));
        int parallelism = Integer.parseInt(get(options, "parallelism", "2"));
        if (max < 1 || parallelism < 1) {
            throw new IllegalArgumentException("LineFiles: max_record_bytes and parallelism must be positive");
        }
        return new ReadOptions(paths, modes, max, parallelism);
    }

    private static String get(Map<String, String> options, String key, String otherwise) {
        for (Map.Entry<String, String> e : options.entrySet()) {   // option names are case-insensitive
            if (e.getKey().equalsIgnoreCase(key)) {
                return e.getValue();
            }
        }
        return otherwise;
    }
}
