package io.fleethealth.engine;

import java.time.DateTimeException;
import java.time.LocalDate;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.zone.ZoneRules;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.Platform;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * The header of an assembled log4j record, as a Spark SQL function {@code f(text, zone)}: the
 * record's lines joined by \n in, the struct (ts, level, thread, logger, message, detail) out.
 *
 * <p>One pass over the record's UTF-8 bytes, fields cut by position: no regex, no decoding to a
 * Java String. The result is what the format's header regex gives (java.util.regex semantics:
 * {@code .} stops at a line terminator, {@code $} also matches before a final one), the way the
 * Spark SQL form of silver read it; {@code ts} is the header's local time in {@code zone} (an
 * instant, as try_make_timestamp gives it; NULL for an impossible date or time), offsets cached per
 * zone and local hour.
 */
public final class Log4jRecords extends StringFunction<InternalRow> {
    public static final StructType RESULT = new StructType()
            .add("ts", DataTypes.TimestampType, true)
            .add("level", DataTypes.StringType, true)
            .add("thread", DataTypes.StringType, true)
            .add("logger", DataTypes.StringType, true)
            .add("message", DataTypes.StringType, true)
            .add("detail", DataTypes.StringType, true);

    /** The layouts the function reads. */
    public enum Format {
        /** {@code [%d] %p %m (%c)} or {@code [%d] [%-5p] [%t] [%c] - %m}. */
        KAFKA,
        /** {@code %d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m}, myid optional. */
        ZOOKEEPER
    }

    private static final int TS_LENGTH = 23;   // yyyy-MM-dd HH:mm:ss,SSS
    private static final UTF8String EMPTY = UTF8String.EMPTY_UTF8;

    private final Format format;
    // the zone and offset of the last local hour read (replaced whole: tasks may share the function)
    private transient volatile Offsets offsets;

    public Log4jRecords(Format format) {
        super(format.name().toLowerCase() + "_log", new String[] {"text", "zone"}, RESULT,
                "struct<ts, level, thread, logger, message, detail> of a " + format.name().toLowerCase()
                        + " log4j record");
        this.format = format;
    }

    @Override
    public InternalRow produceResult(InternalRow input) {
        return invoke(argument(input, 0), argument(input, 1));
    }

    /** The magic method Spark calls (generated code, no conversion of its arguments). */
    public InternalRow invoke(UTF8String text, UTF8String zone) {
        if (text == null) {
            return row(null, null, null, null, EMPTY, null);
        }
        byte[] b = new byte[text.numBytes()];
        text.writeToMemory(b, Platform.BYTE_ARRAY_OFFSET);
        int n = b.length;
        int lineBreak = indexOf(b, (byte) '\n', 0, n);
        Header h = new Header();
        // the one place a record's layout is chosen: each record in the first known layout it is in
        Log4jLayouts.parse(b, lineBreak < 0 ? n : lineBreak, h);
        UTF8String rest = lineBreak < 0 ? null : text(b, lineBreak + 1, n);
        if (!h.matched) {
            return format == Format.KAFKA ? kafka(b, h, null, rest, zone)
                    : row(null, null, null, null, concatWs(null, rest), null);
        }
        UTF8String body = slice(b, h.body, h.bodyEnd);
        InternalRow r;
        if (h.kind == Log4jLayouts.Kind.KAFKA) {
            r = kafka(b, h, body, rest, zone);
        } else if (h.kind == Log4jLayouts.Kind.HEADER) {
            r = row(timestamp(b, h, zone), slice(b, h.level, h.levelEnd), slice(b, h.thread, h.threadEnd),
                    slice(b, h.altLogger, h.altLoggerEnd), body, rest);
        } else {
            r = trailing(b, h, body, rest, zone);
        }
        // ZooKeeper's records keep their lines after the first in the message
        return format == Format.KAFKA ? r : row(r.isNullAt(0) ? null : r.getLong(0), r.getUTF8String(1),
                r.getUTF8String(2), r.getUTF8String(3), concatWs(r.getUTF8String(4), r.getUTF8String(5)), null);
    }

    // ---- the two layouts ---------------------------------------------------------------------

    /** `rest`: the lines after the first (NULL when there are none). */
    private InternalRow kafka(byte[] b, Header h, UTF8String body, UTF8String rest, UTF8String zone) {
        int n = b.length;
        UTF8String altLogger = h.matched ? slice(b, h.altLogger, h.altLoggerEnd) : null;

        // ` (logger)` ending the first line's body, else the last line (when there are several)
        int firstLogger = body == null ? -1 : trailingLogger(b, h.body, h.bodyEnd, false);
        UTF8String firstLoggerText = firstLogger < 0 ? null : slice(b, firstLogger + 2, h.bodyEnd - 1);
        int lastStart = lastIndexOf(b, (byte) '\n', n) + 1;
        int lastLogger = trailingLogger(b, lastStart, n, true);
        UTF8String lastLoggerText = lastLogger < 0 ? null
                : slice(b, lastLogger + 2, endBeforeFinalTerminator(b, lastStart, n) - 1);

        UTF8String logger = altLogger != null ? altLogger : firstLoggerText != null ? firstLoggerText
                : rest != null ? lastLoggerText : null;
        boolean inFirst = altLogger != null || firstLoggerText != null;
        UTF8String message = null;
        if (inFirst) {
            message = firstLoggerText == null ? body : text(b, h.body, firstLogger);
        }
        if (message == null) {
            UTF8String joined = concatWs(body, rest);
            message = lastLoggerText == null ? joined : withoutTrailingLogger(joined);
        }
        UTF8String level = h.matched ? (h.altLevel >= 0 ? slice(b, h.altLevel, h.altLevelEnd)
                : slice(b, h.level, h.levelEnd)) : null;
        UTF8String thread = h.matched ? slice(b, h.thread, h.threadEnd) : null;
        return row(h.matched ? timestamp(b, h, zone) : null, level, thread, logger, message,
                inFirst ? rest : null);
    }

    /**
     * `%m (%c) [%t]`: logger and thread after the first line's body (message: that body, detail: the
     * lines after), else after the last line's (message: all lines less ` (logger) [thread]`).
     */
    private InternalRow trailing(byte[] b, Header h, UTF8String body, UTF8String rest, UTF8String zone) {
        Long ts = timestamp(b, h, zone);
        UTF8String level = slice(b, h.level, h.levelEnd);
        if (h.altLogger >= 0) {
            return row(ts, level, slice(b, h.thread, h.threadEnd), slice(b, h.altLogger, h.altLoggerEnd),
                    text(b, h.body, h.bodyEnd), rest);
        }
        if (rest != null) {
            int n = b.length;
            int lastStart = lastIndexOf(b, (byte) '\n', n) + 1;
            Header last = new Header();
            if (Log4jLayouts.trailingThread(b, lastStart, endBeforeFinalTerminator(b, lastStart, n), last)) {
                int cut = last.bodyEnd > h.body && b[last.bodyEnd - 1] == '\n' ? last.bodyEnd - 1 : last.bodyEnd;
                return row(ts, level, slice(b, last.thread, last.threadEnd),
                        slice(b, last.altLogger, last.altLoggerEnd), text(b, h.body, Math.max(cut, h.body)), null);
            }
        }
        return row(ts, level, null, null, concatWs(body, rest), null);
    }

    /** Positions of a header's groups in the record's bytes (start inclusive, end exclusive; -1: none). */
    static final class Header {
        Log4jLayouts.Kind kind;
        boolean matched;
        boolean seconds;                         // a timestamp without milliseconds
        int ts = -1;
        int level = -1, levelEnd = -1;
        int altLevel = -1, altLevelEnd = -1;
        int thread = -1, threadEnd = -1;
        int altLogger = -1, altLoggerEnd = -1;   // Kafka's [%c]; ZooKeeper's %C
        int body = -1, bodyEnd = -1;
    }

    /** `^\[TS\] (?:\[([A-Z]+) *\] \[([^\]]*)\] \[([^\]]*)\] - |([A-Z]+) )(.*)$` over b[0, end). */
    static void parseKafkaHeader(byte[] b, int end, Header h) {
        if (end < TS_LENGTH + 3 || b[0] != '[' || !isTimestamp(b, 1) || b[TS_LENGTH + 1] != ']'
                || b[TS_LENGTH + 2] != ' ') {
            return;
        }
        int p = TS_LENGTH + 3;
        if (p < end && b[p] == '[') {
            // the custom layout: [LEVEL  ] [thread] [logger] - body
            int q = Log4jLayouts.upperRun(b, p + 1, end);
            if (q == p + 1) {
                return;
            }
            int r = q;
            while (r < end && b[r] == ' ') {
                r++;
            }
            if (!Log4jLayouts.startsWith(b, r, end, "] [")) {
                return;
            }
            int thread = r + 3;
            int threadEnd = indexOf(b, (byte) ']', thread, end);
            if (threadEnd < 0 || !Log4jLayouts.startsWith(b, threadEnd, end, "] [")) {
                return;
            }
            int logger = threadEnd + 3;
            int loggerEnd = indexOf(b, (byte) ']', logger, end);
            if (loggerEnd < 0 || !Log4jLayouts.startsWith(b, loggerEnd, end, "] - ")) {
                return;
            }
            int body = loggerEnd + 4;
            int bodyEnd = bodyEnd(b, body, end);
            if (bodyEnd < body) {
                return;
            }
            h.altLevel = p + 1;
            h.altLevelEnd = q;
            h.thread = thread;
            h.threadEnd = threadEnd;
            h.altLogger = logger;
            h.altLoggerEnd = loggerEnd;
            h.body = body;
            h.bodyEnd = bodyEnd;
        } else {
            int q = Log4jLayouts.upperRun(b, p, end);
            if (q == p || q >= end || b[q] != ' ') {
                return;
            }
            int bodyEnd = bodyEnd(b, q + 1, end);
            if (bodyEnd < q + 1) {
                return;
            }
            h.level = p;
            h.levelEnd = q;
            h.body = q + 1;
            h.bodyEnd = bodyEnd;
        }
        h.ts = 1;
        h.matched = true;
    }

    /** `^(TS) (?:\[myid:(\d*)\] )?- ([A-Z]+) *\[(.*?):([\w$.]+)@(\d+)\] - (.*)$` over b[0, end). */
    static void parseZookeeperHeader(byte[] b, int end, Header h) {
        if (end < TS_LENGTH + 1 || !isTimestamp(b, 0) || b[TS_LENGTH] != ' ') {
            return;
        }
        int p = TS_LENGTH + 1;
        if (Log4jLayouts.startsWith(b, p, end, "[myid:")) {
            int q = p + 6;
            while (q < end && isDigit(b[q])) {
                q++;
            }
            if (Log4jLayouts.startsWith(b, q, end, "] ")) {
                p = q + 2;
            }
        }
        if (!Log4jLayouts.startsWith(b, p, end, "- ")) {
            return;
        }
        int level = p + 2;
        int levelEnd = Log4jLayouts.upperRun(b, level, end);
        if (levelEnd == level) {
            return;
        }
        int q = levelEnd;
        while (q < end && b[q] == ' ') {
            q++;
        }
        if (q >= end || b[q] != '[') {
            return;
        }
        int thread = q + 1;
        // the thread is the shortest text (no line terminator) before a `:%C@%L] - ` that leads to a body
        for (int c = thread; c < end; c++) {
            int t = terminatorLength(b, c, end);
            if (t > 0) {
                return;
            }
            if (b[c] != ':') {
                continue;
            }
            int cls = c + 1;
            int clsEnd = cls;
            while (clsEnd < end && (isWord(b[clsEnd]) || b[clsEnd] == '$' || b[clsEnd] == '.')) {
                clsEnd++;
            }
            if (clsEnd == cls || clsEnd >= end || b[clsEnd] != '@') {
                continue;
            }
            int lineEnd = clsEnd + 1;
            while (lineEnd < end && isDigit(b[lineEnd])) {
                lineEnd++;
            }
            if (lineEnd == clsEnd + 1 || !Log4jLayouts.startsWith(b, lineEnd, end, "] - ")) {
                continue;
            }
            int body = lineEnd + 4;
            int bodyEnd = bodyEnd(b, body, end);
            if (bodyEnd < body) {
                continue;
            }
            h.ts = 0;
            h.level = level;
            h.levelEnd = levelEnd;
            h.thread = thread;
            h.threadEnd = c;
            h.altLogger = cls;
            h.altLoggerEnd = clsEnd;
            h.body = body;
            h.bodyEnd = bodyEnd;
            h.matched = true;
            return;
        }
    }

    // ---- `(.*)$`, ` \(([\w.$-]+)\)$` ----------------------------------------------------------

    /**
     * Where `(.*)$` from b[from] to the end of a line b[.., end) stops: before a final line
     * terminator, or at the end; Integer.MIN_VALUE when a line terminator occurs elsewhere in it
     * (`.` cannot cross it).
     */
    static int bodyEnd(byte[] b, int from, int end) {
        int stop = endBeforeFinalTerminator(b, from, end);
        for (int i = from; i < stop; i++) {
            if (b[i] == '\r' || ((b[i] & 0xFF) >= 0xC2 && terminatorLength(b, i, stop) > 0)) {
                return Integer.MIN_VALUE;
            }
        }
        return stop;
    }

    /**
     * The body's start index of a body (b[from, to), no \n) whose last ` (` opens a ` (logger)`
     * ending it — before a final line terminator when `allowTerminator` — else -1.
     * The match found is the one regexp_extract finds on the text after the last ` (`.
     */
    private static int trailingLogger(byte[] b, int from, int to, boolean allowTerminator) {
        int open = -1;
        for (int i = to - 2; i >= from; i--) {
            if (b[i] == ' ' && b[i + 1] == '(') {
                open = i;
                break;
            }
        }
        if (open < 0) {
            return -1;
        }
        int end = allowTerminator ? endBeforeFinalTerminator(b, open, to) : to;
        int name = open + 2;
        if (end - 1 <= name || b[end - 1] != ')') {
            return -1;
        }
        for (int i = name; i < end - 1; i++) {
            if (!isLoggerChar(b[i])) {
                return -1;
            }
        }
        return open;
    }

    /** regexp_replace(text, `\n? \(([\w.$-]+)\)$`, ''): the ` (logger)` that ends text, and the line
     * break before it, removed (a final line terminator stays). */
    private static UTF8String withoutTrailingLogger(UTF8String text) {
        byte[] b = text.getBytes();
        int n = b.length;
        int end = endBeforeFinalTerminator(b, 0, n);
        if (end < 4 || b[end - 1] != ')') {
            return text;
        }
        int i = end - 2;
        while (i >= 0 && isLoggerChar(b[i])) {
            i--;
        }
        if (i == end - 2 || i < 1 || b[i] != '(' || b[i - 1] != ' ') {
            return text;
        }
        int start = i - 1;
        if (start > 0 && b[start - 1] == '\n') {
            start--;
        }
        byte[] out = new byte[n - (end - start)];
        System.arraycopy(b, 0, out, 0, start);
        System.arraycopy(b, end, out, start, n - end);
        return UTF8String.fromBytes(out);
    }

    /** `to`, or `to` less a line terminator that ends b[from, to). */
    private static int endBeforeFinalTerminator(byte[] b, int from, int to) {
        if (to > from && b[to - 1] == '\r') {
            return to - 1;
        }
        if (to - from >= 2 && b[to - 2] == (byte) 0xC2 && b[to - 1] == (byte) 0x85) {
            return to - 2;
        }
        if (to - from >= 3 && b[to - 3] == (byte) 0xE2 && b[to - 2] == (byte) 0x80
                && (b[to - 1] == (byte) 0xA8 || b[to - 1] == (byte) 0xA9)) {
            return to - 3;
        }
        return to;
    }

    /** Bytes of the line terminator (other than \n) starting at i: \r, U+0085, U+2028, U+2029; else 0. */
    private static int terminatorLength(byte[] b, int i, int end) {
        byte c = b[i];
        if (c == '\r') {
            return 1;
        }
        if (c == (byte) 0xC2 && i + 1 < end && b[i + 1] == (byte) 0x85) {
            return 2;
        }
        if (c == (byte) 0xE2 && i + 2 < end && b[i + 1] == (byte) 0x80
                && (b[i + 2] == (byte) 0xA8 || b[i + 2] == (byte) 0xA9)) {
            return 3;
        }
        return 0;
    }

    // ---- the timestamp -----------------------------------------------------------------------

    /** Local `yyyy-MM-dd HH:mm:ss[,SSS]` at b[h.ts] in `zone` -> microseconds since the epoch, or null. */
    private Long timestamp(byte[] b, Header h, UTF8String zone) {
        if (zone == null) {
            return null;
        }
        int at = h.ts;
        int year = number(b, at, 4);
        int month = number(b, at + 5, 2);
        int day = number(b, at + 8, 2);
        int hour = number(b, at + 11, 2);
        int minute = number(b, at + 14, 2);
        int second = number(b, at + 17, 2);
        int milli = h.seconds ? 0 : number(b, at + 20, 3);
        if (hour > 23 || minute > 59 || second > 59) {
            return null;
        }
        long epochDay;
        try {
            epochDay = LocalDate.of(year, month, day).toEpochDay();
        } catch (DateTimeException e) {
            return null;
        }
        long localHour = epochDay * 24 + hour;
        Offsets o = offsets;
        if (o == null || o.localHour != localHour || !o.zone.equals(zone)) {
            o = Offsets.of(zone, localHour, year, month, day, hour);
            if (o == null) {
                return null;
            }
            offsets = o;
        }
        long local = localHour * 3600 + minute * 60L + second;
        if (o.offsetSeconds == Offsets.AMBIGUOUS) {
            // a gap or an overlap of the zone's offsets in this local hour: as ZonedDateTime resolves it
            LocalDateTime t = LocalDateTime.of(year, month, day, hour, minute, second, milli * 1_000_000);
            return DateTimeUtils.instantToMicros(t.atZone(o.zoneId).toInstant());
        }
        return (local - o.offsetSeconds) * 1_000_000L + milli * 1_000L;
    }

    /** A zone's offset over one local hour (AMBIGUOUS when it changes within it). */
    private static final class Offsets {
        static final int AMBIGUOUS = Integer.MIN_VALUE;
        final UTF8String zone;
        final ZoneId zoneId;
        final long localHour;
        final int offsetSeconds;

        private Offsets(UTF8String zone, ZoneId zoneId, long localHour, int offsetSeconds) {
            this.zone = zone.clone();
            this.zoneId = zoneId;
            this.localHour = localHour;
            this.offsetSeconds = offsetSeconds;
        }

        static Offsets of(UTF8String zone, long localHour, int year, int month, int day, int hour) {
            ZoneId id;
            try {
                id = DateTimeUtils.getZoneId(zone.toString());
            } catch (DateTimeException e) {
                return null;
            }
            ZoneRules rules = id.getRules();
            LocalDateTime start = LocalDateTime.of(year, month, day, hour, 0);
            LocalDateTime last = start.plusSeconds(3599);
            var valid = rules.getValidOffsets(start);
            ZoneOffset atStart = valid.size() == 1 ? valid.get(0) : null;
            var validLast = rules.getValidOffsets(last);
            boolean same = atStart != null && validLast.size() == 1 && validLast.get(0).equals(atStart);
            return new Offsets(zone, id, localHour, same ? atStart.getTotalSeconds() : AMBIGUOUS);
        }
    }

    // ---- bytes -------------------------------------------------------------------------------

    private static InternalRow row(Long ts, UTF8String level, UTF8String thread, UTF8String logger,
                                   UTF8String message, UTF8String detail) {
        return new GenericInternalRow(new Object[] {ts, level, thread, logger, message, detail});
    }

    /** b[from, to) as a string, NULL when empty (as nullif(group, '') read it). */
    private static UTF8String slice(byte[] b, int from, int to) {
        return from < 0 || to <= from ? null : UTF8String.fromBytes(b, from, to - from);
    }

    /** b[from, to) as a string, empty included. */
    private static UTF8String text(byte[] b, int from, int to) {
        return UTF8String.fromBytes(b, from, to - from);
    }

    private static UTF8String concatWs(UTF8String a, UTF8String c) {
        if (a == null) {
            return c == null ? EMPTY : c;
        }
        return c == null ? a : UTF8String.concatWs(UTF8String.fromString("\n"), a, c);
    }

    private static boolean isTimestamp(byte[] b, int at) {
        return Log4jLayouts.isTimestamp(b, at, b.length, TS_LENGTH);
    }

    private static int number(byte[] b, int at, int digits) {
        int v = 0;
        for (int i = at; i < at + digits; i++) {
            v = v * 10 + (b[i] - '0');
        }
        return v;
    }


    private static int indexOf(byte[] b, byte c, int from, int end) {
        for (int i = from; i < end; i++) {
            if (b[i] == c) {
                return i;
            }
        }
        return -1;
    }

    private static int lastIndexOf(byte[] b, byte c, int end) {
        for (int i = end - 1; i >= 0; i--) {
            if (b[i] == c) {
                return i;
            }
        }
        return -1;
    }

    static boolean isDigit(byte c) {
        return c >= '0' && c <= '9';
    }

    private static boolean isWord(byte c) {
        return isDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    }

    static boolean isLoggerChar(byte c) {
        return isWord(c) || c == '.' || c == '$' || c == '-';
    }
}
