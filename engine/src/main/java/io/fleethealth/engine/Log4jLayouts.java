package io.fleethealth.engine;

/**
 * The known log4j layouts, recognised per record from its first bytes (a file may mix them).
 *
 * <ul>
 *   <li>{@code [%d] %p %m (%c)} (Kafka's default, log4j 1 and 4.x's log4j2; Confluent, Bitnami, apache/kafka
 *       images) and {@code [%d] [%-5p] [%t] [%c] - %m}: {@link Log4jRecords#parseKafkaHeader};</li>
 *   <li>{@code %d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m} (ZooKeeper 3.4 to 3.9, myid optional):
 *       {@link Log4jRecords#parseZookeeperHeader};</li>
 *   <li>{@code %d{ISO8601} %p %m (%c) [%t]} (Strimzi before Kafka 4, Kafka and ZooKeeper): {@link Kind#TRAILING};</li>
 *   <li>{@code %d %p [%t] %c - %m} and Strimzi's Kafka 4 {@code %d{yyyy-MM-dd HH:mm:ss} %-5p [%t] %c{1}:%L - %m}
 *       (seconds only): {@link Kind#HEADER}.</li>
 * </ul>
 * A line opening with any of their timestamps starts a record ({@link #isStart}): never a continuation.
 */
final class Log4jLayouts {
    /** Where the logger of a record is. */
    enum Kind {
        /** Kafka's two layouts (Log4jRecords' own reading). */
        KAFKA,
        /** In the header, before the body (ZooKeeper's, `%t] %c - `). */
        HEADER,
        /** `%m (%c) [%t]`: after the body, on the first line or the last. */
        TRAILING
    }

    static final int TS = 23;          // yyyy-MM-dd HH:mm:ss,SSS
    static final int TS_SECONDS = 19;  // yyyy-MM-dd HH:mm:ss

    private Log4jLayouts() {
    }

    /**
     * The header of b[0, end) (a record's first line) in the first known layout it is in, into h.
     * A layout given for the host (its ConversionPattern, a JSON layout) is to be tried here, first.
     */
    static void parse(byte[] b, int end, Log4jRecords.Header h) {
        if (end > 0 && b[0] == '[') {
            h.kind = Kind.KAFKA;
            Log4jRecords.parseKafkaHeader(b, end, h);
            return;
        }
        int ts = timestampLength(b, end);
        if (ts == 0 || ts >= end || b[ts] != ' ') {
            return;
        }
        if (ts == TS && (startsWith(b, ts + 1, end, "[myid:") || startsWith(b, ts + 1, end, "- "))) {
            h.kind = Kind.HEADER;
            Log4jRecords.parseZookeeperHeader(b, end, h);
            return;
        }
        parseLevelFirst(b, end, ts, h);
    }

    /** Whether a line opens with a known layout's timestamp: `[TS] `, `TS ` or `TS_SECONDS [A-Z]`. */
    static boolean isStart(byte[] b, int n) {
        if (n >= TS + 3 && b[0] == '[') {
            return isTimestamp(b, 1, n, TS) && b[TS + 1] == ']' && b[TS + 2] == ' ';
        }
        int ts = timestampLength(b, n);
        if (ts == TS) {
            return n > TS && b[TS] == ' ';
        }
        return ts == TS_SECONDS && n > TS_SECONDS + 1 && b[TS_SECONDS] == ' '
                && b[TS_SECONDS + 1] >= 'A' && b[TS_SECONDS + 1] <= 'Z';
    }

    /** `TS %-5p ` then `[%t] %c[:%L] - %m` or `%m (%c) [%t]` (`%m` alone: the logger on the last line). */
    private static void parseLevelFirst(byte[] b, int end, int ts, Log4jRecords.Header h) {
        int level = ts + 1;
        int levelEnd = upperRun(b, level, end);
        if (levelEnd == level || levelEnd >= end || b[levelEnd] != ' ') {
            return;
        }
        int body = levelEnd;
        while (body < end && b[body] == ' ') {
            body++;
        }
        int lineEnd = Log4jRecords.bodyEnd(b, body, end);
        if (lineEnd < body) {
            return;
        }
        h.ts = 0;
        h.seconds = ts == TS_SECONDS;
        h.level = level;
        h.levelEnd = levelEnd;
        h.body = body;
        h.bodyEnd = lineEnd;
        h.matched = true;
        if (trailingThread(b, body, lineEnd, h)) {
            h.kind = Kind.TRAILING;
            return;
        }
        if (body < lineEnd && b[body] == '[' && threadLogger(b, body, lineEnd, h)) {
            h.kind = Kind.HEADER;
            return;
        }
        h.kind = Kind.TRAILING;   // the logger, if any, ends the last line
    }

    /** `%m (%c) [%t]` ending b[from, to): body, thread and logger set in h. */
    static boolean trailingThread(byte[] b, int from, int to, Log4jRecords.Header h) {
        if (to - from < 7 || b[to - 1] != ']') {
            return false;
        }
        for (int i = to - 4; i > from; i--) {
            if (b[i] != ')' || b[i + 1] != ' ' || b[i + 2] != '[') {
                continue;
            }
            int open = i - 1;
            while (open > from && Log4jRecords.isLoggerChar(b[open])) {
                open--;
            }
            if (open == i - 1 || open - 1 < from || b[open] != '(' || b[open - 1] != ' ') {
                continue;
            }
            h.thread = i + 3;
            h.threadEnd = to - 1;
            h.altLogger = open + 1;
            h.altLoggerEnd = i;
            h.bodyEnd = open - 1;
            return true;
        }
        return false;
    }

    /** `[%t] %c - %m` or `[%t] %c:%L - %m` (b[from] is `[`): the first `] ` that leads to such a header. */
    private static boolean threadLogger(byte[] b, int from, int to, Log4jRecords.Header h) {
        for (int close = from + 1; close + 1 < to; close++) {
            if (b[close] != ']' || b[close + 1] != ' ') {
                continue;
            }
            int logger = close + 2;
            int loggerEnd = logger;
            while (loggerEnd < to && Log4jRecords.isLoggerChar(b[loggerEnd])) {
                loggerEnd++;
            }
            if (loggerEnd == logger) {
                continue;
            }
            int p = loggerEnd;
            if (p < to && b[p] == ':') {
                p++;
                int digits = p;
                while (p < to && (Log4jRecords.isDigit(b[p]) || b[p] == '?')) {
                    p++;
                }
                if (p == digits) {
                    continue;
                }
            }
            if (!startsWith(b, p, to, " - ")) {
                continue;
            }
            h.thread = from + 1;
            h.threadEnd = close;
            h.altLogger = logger;
            h.altLoggerEnd = loggerEnd;
            h.body = p + 3;
            return true;
        }
        return false;
    }

    /** {@link #isStart} on a line's bytes, read in place (no copy: it runs on every line). */
    static boolean isStart(org.apache.spark.unsafe.types.UTF8String line) {
        int n = line.numBytes();
        if (n >= TS + 3 && line.getByte(0) == '[') {
            return isTimestamp(line, 1, n, TS) && line.getByte(TS + 1) == ']' && line.getByte(TS + 2) == ' ';
        }
        if (!isTimestamp(line, 0, n, TS_SECONDS) || n <= TS_SECONDS + 1) {
            return false;
        }
        if (isTimestamp(line, 0, n, TS)) {
            return n > TS && line.getByte(TS) == ' ';
        }
        byte c = line.getByte(TS_SECONDS + 1);
        return line.getByte(TS_SECONDS) == ' ' && c >= 'A' && c <= 'Z';
    }

    private static boolean isTimestamp(org.apache.spark.unsafe.types.UTF8String s, int at, int end, int length) {
        if (at + length > end) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char shape = SHAPE.charAt(i);
            byte c = s.getByte(at + i);
            if (shape == 'd' ? !Log4jRecords.isDigit(c) : c != shape) {
                return false;
            }
        }
        return true;
    }

    /** TS or TS_SECONDS when a timestamp opens b[0, end), else 0. */
    static int timestampLength(byte[] b, int end) {
        if (!isTimestamp(b, 0, end, TS_SECONDS)) {
            return 0;
        }
        return isTimestamp(b, 0, end, TS) ? TS : TS_SECONDS;
    }

    // \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3}: 'd' a digit, else that character
    private static final String SHAPE = "dddd-dd-dd dd:dd:dd,ddd";

    static boolean isTimestamp(byte[] b, int at, int end, int length) {
        if (at + length > end) {
            return false;
        }
        for (int i = 0; i < length; i++) {
            char s = SHAPE.charAt(i);
            byte c = b[at + i];
            if (s == 'd' ? !Log4jRecords.isDigit(c) : c != s) {
                return false;
            }
        }
        return true;
    }

    /** The end of the run of ASCII capitals from `from` (a level's name). */
    static int upperRun(byte[] b, int from, int end) {
        int i = from;
        while (i < end && b[i] >= 'A' && b[i] <= 'Z') {
            i++;
        }
        return i;
    }

    /** Whether `ascii` is at `at` in b[..end). */
    static boolean startsWith(byte[] b, int at, int end, String ascii) {
        if (at < 0 || at + ascii.length() > end) {
            return false;
        }
        for (int i = 0; i < ascii.length(); i++) {
            if (b[at + i] != ascii.charAt(i)) {
                return false;
            }
        }
        return true;
    }
}
