package io.fleethealth.engine;

import java.time.DateTimeException;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeFormatterBuilder;
import java.time.format.ResolverStyle;
import java.time.temporal.ChronoField;
import java.time.temporal.TemporalAccessor;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Records of a layout given as a log4j ConversionPattern (the inventory's {@code log_pattern:}),
 * compiled by fleethealth.silver.parsers.conversion_pattern into Java regexes and a
 * DateTimeFormatter pattern, as two Spark SQL functions:
 * <ul>
 * <li>{@code pattern_start(line, start)}: whether the line opens with the regex {@code start};</li>
 * <li>{@code pattern_log(text, zone, regex, time_format)}: the struct (ts, level, thread, logger,
 * message, detail) of an assembled record, its first line read by {@code regex} (named groups ts,
 * level, thread, logger, message), the lines after it the detail (as a Kafka record whose logger
 * is on its first line); {@code ts} the local time in {@code zone} (or at the offset the time
 * carries), NULL when it is no time. A first line the regex does not read gives a NULL level and
 * the whole text as message (silver quarantines it).</li>
 * </ul>
 * Regexes and formats are compiled once per distinct value (a fleet has a few) and shared.
 */
public final class RegexLayout {
    private static final Map<String, Pattern> PATTERNS = new ConcurrentHashMap<>();
    private static final Map<String, DateTimeFormatter> FORMATS = new ConcurrentHashMap<>();
    private static final Map<String, ZoneId> ZONES = new ConcurrentHashMap<>();
    private static final String[] GROUPS = {"ts", "level", "thread", "logger", "message"};

    private RegexLayout() {
    }

    static Pattern pattern(String regex) {
        return PATTERNS.computeIfAbsent(regex, r -> {
            try {
                return Pattern.compile(r);
            } catch (PatternSyntaxException e) {
                throw new IllegalArgumentException("log_pattern regex does not compile: " + e.getMessage(), e);
            }
        });
    }

    static DateTimeFormatter format(String timeFormat) {
        return FORMATS.computeIfAbsent(timeFormat, f -> new DateTimeFormatterBuilder().parseCaseInsensitive()
                .appendPattern(f).toFormatter(Locale.ENGLISH).withResolverStyle(ResolverStyle.STRICT));
    }

    static ZoneId zone(String zone) {
        return ZONES.computeIfAbsent(zone, DateTimeUtils::getZoneId);
    }

    /** Microseconds since the epoch of `text` in `format`, local to `zone` unless it carries an offset; null if no time. */
    static Long micros(String text, String timeFormat, String zone) {
        try {
            TemporalAccessor t = format(timeFormat).parse(text);
            LocalDateTime local = LocalDateTime.of(t.get(ChronoField.YEAR), t.get(ChronoField.MONTH_OF_YEAR),
                    t.get(ChronoField.DAY_OF_MONTH), hour(t), minute(t), second(t), nano(t));
            var at = t.isSupported(ChronoField.OFFSET_SECONDS)
                    ? local.atOffset(java.time.ZoneOffset.ofTotalSeconds(t.get(ChronoField.OFFSET_SECONDS)))
                            .toInstant()
                    : zone == null ? null : local.atZone(zone(zone)).toInstant();
            return at == null ? null : DateTimeUtils.instantToMicros(at);
        } catch (DateTimeException | ArithmeticException e) {
            return null;
        }
    }

    private static int hour(TemporalAccessor t) {
        return t.isSupported(ChronoField.HOUR_OF_DAY) ? t.get(ChronoField.HOUR_OF_DAY) : 0;
    }

    private static int minute(TemporalAccessor t) {
        return t.isSupported(ChronoField.MINUTE_OF_HOUR) ? t.get(ChronoField.MINUTE_OF_HOUR) : 0;
    }

    private static int second(TemporalAccessor t) {
        return t.isSupported(ChronoField.SECOND_OF_MINUTE) ? t.get(ChronoField.SECOND_OF_MINUTE) : 0;
    }

    private static int nano(TemporalAccessor t) {
        return t.isSupported(ChronoField.NANO_OF_SECOND) ? t.get(ChronoField.NANO_OF_SECOND) : 0;
    }

    /** {@code pattern_start(line, start)}. */
    public static final class Start extends StringFunction<Boolean> {
        public Start() {
            super("pattern_start", new String[] {"line", "start"}, DataTypes.BooleanType,
                    "whether the line opens with the regex `start` (a log_pattern's record start)");
        }

        @Override
        public Boolean produceResult(InternalRow input) {
            return invoke(argument(input, 0), argument(input, 1));
        }

        public boolean invoke(UTF8String line, UTF8String start) {
            if (line == null || start == null) {
                return false;
            }
            return pattern(start.toString()).matcher(line.toString()).lookingAt();
        }
    }

    /** {@code pattern_log(text, zone, regex, time_format)}. */
    public static final class Log extends StringFunction<InternalRow> {
        public Log() {
            super("pattern_log", new String[] {"text", "zone", "regex", "time_format"}, Log4jRecords.RESULT,
                    "struct<ts, level, thread, logger, message, detail> of a record in a log_pattern's layout");
        }

        @Override
        public InternalRow produceResult(InternalRow input) {
            return invoke(argument(input, 0), argument(input, 1), argument(input, 2), argument(input, 3));
        }

        public InternalRow invoke(UTF8String text, UTF8String zone, UTF8String regex, UTF8String timeFormat) {
            if (text == null) {
                return row(null, null, null, null, UTF8String.EMPTY_UTF8, null);
            }
            String s = text.toString();
            int lineBreak = s.indexOf('\n');
            String first = lineBreak < 0 ? s : s.substring(0, lineBreak);
            UTF8String rest = lineBreak < 0 ? null : UTF8String.fromString(s.substring(lineBreak + 1));
            Matcher m = regex == null ? null : pattern(regex.toString()).matcher(first);
            if (m == null || timeFormat == null || !m.matches()) {
                return row(null, null, null, null, text, null);
            }
            String[] g = new String[GROUPS.length];
            for (int i = 0; i < GROUPS.length; i++) {
                try {
                    g[i] = m.group(GROUPS[i]);
                } catch (IllegalArgumentException e) {    // the pattern has no such conversion
                    g[i] = null;
                }
            }
            Long ts = micros(g[0], timeFormat.toString(), zone == null ? null : zone.toString());
            return row(ts, string(g[1]), string(g[2]), string(g[3]),
                    g[4] == null ? UTF8String.EMPTY_UTF8 : UTF8String.fromString(g[4]), rest);
        }
    }

    /** null for an empty group (as nullif(group, '')). */
    static UTF8String string(String s) {
        return s == null || s.isEmpty() ? null : UTF8String.fromString(s);
    }

    static InternalRow row(Long ts, UTF8String level, UTF8String thread, UTF8String logger, UTF8String message,
                           UTF8String detail) {
        return new GenericInternalRow(new Object[] {ts, level, thread, logger, message, detail});
    }
}
