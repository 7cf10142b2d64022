package io.fleethealth.engine;

import java.io.IOException;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.time.format.DateTimeFormatter;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.DateTimeUtils;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Records of log4j 2's JsonTemplateLayout (one JSON object per line), as two Spark SQL functions:
 * {@code json_start(line)} (the line opens with <code>{"</code>) and {@code json_log(text, zone)},
 * the struct (ts, level, thread, logger, message, detail) of one record, read with Jackson from the
 * fields of the layout's ECS template (<code>@timestamp, log.level, process.thread.name, log.logger,
 * message, error.stack_trace</code>) or of its JsonLayout template (<code>instant.epochSecond</code>
 * and <code>nanoOfSecond</code> or <code>timeMillis</code>, <code>level, thread, loggerName, message,
 * thrown.extendedStackTrace</code>). {@code detail} is the stack trace (as the lines after a Kafka
 * record's first), else the exception's class and message when only those are there. The time is
 * the instant the record says (UTC or with its offset): {@code zone} is only for a time without one.
 * Lines after the object (not records of their own) follow the stack trace in {@code detail}. Not an
 * object, or no time and level: NULL level (silver quarantines it).
 */
public final class JsonLayout {
    private static final ObjectMapper MAPPER = new ObjectMapper()
            .configure(JsonParser.Feature.ALLOW_NON_NUMERIC_NUMBERS, true)
            .configure(DeserializationFeature.FAIL_ON_TRAILING_TOKENS, true);   // `{...} more` is no record

    private JsonLayout() {
    }

    /** {@code json_start(line)}. */
    public static final class Start extends StringFunction<Boolean> {
        public Start() {
            super("json_start", new String[] {"line"}, DataTypes.BooleanType,
                    "whether the line starts a JSON layout record (opens with {\")");
        }

        @Override
        public Boolean produceResult(InternalRow input) {
            return invoke(argument(input, 0));
        }

        public boolean invoke(UTF8String line) {
            return line != null && line.numBytes() >= 2 && line.getByte(0) == '{' && line.getByte(1) == '"';
        }
    }

    /** {@code json_log(text, zone)}. */
    public static final class Log extends StringFunction<InternalRow> {
        public Log() {
            super("json_log", new String[] {"text", "zone"}, Log4jRecords.RESULT,
                    "struct<ts, level, thread, logger, message, detail> of a JSON layout record");
        }

        @Override
        public InternalRow produceResult(InternalRow input) {
            return invoke(argument(input, 0), argument(input, 1));
        }

        public InternalRow invoke(UTF8String text, UTF8String zone) {
            if (text == null) {
                return RegexLayout.row(null, null, null, null, UTF8String.EMPTY_UTF8, null);
            }
            String s = text.toString();
            int lineBreak = s.indexOf('\n');
            // lines glued after the object (no record start of their own) are kept, after the stack trace
            String more = lineBreak < 0 ? null : s.substring(lineBreak + 1);
            JsonNode r;
            try {
                r = MAPPER.readTree(lineBreak < 0 ? s : s.substring(0, lineBreak));
            } catch (IOException e) {
                r = null;
            }
            if (r == null || !r.isObject()) {
                return RegexLayout.row(null, null, null, null, text, null);
            }
            String level = str(r, "log.level", "level");
            Long ts = time(r, zone);
            String message = str(r, "message");
            if (level == null || (ts == null && !r.has("@timestamp") && !r.has("instant") && !r.has("timeMillis"))) {
                return RegexLayout.row(null, null, null, null, text, null);
            }
            return RegexLayout.row(ts, RegexLayout.string(level), RegexLayout.string(str(r, "process.thread.name",
                    "thread")), RegexLayout.string(str(r, "log.logger", "loggerName")),
                    UTF8String.fromString(message == null ? "" : message), RegexLayout.string(
                            more == null ? detail(r) : detail(r) == null ? more : detail(r) + "\n" + more));
        }
    }

    /** The first of `keys` that is a text or number (ECS writes dotted keys flat: "log.level"). */
    private static String str(JsonNode r, String... keys) {
        for (String k : keys) {
            JsonNode v = r.get(k);
            if (v != null && v.isValueNode() && !v.isNull()) {
                return v.asText();
            }
        }
        return null;
    }

    private static String detail(JsonNode r) {
        String trace = str(r, "error.stack_trace");
        if (trace != null) {
            return trace;
        }
        JsonNode thrown = r.get("thrown");
        if (thrown != null && thrown.isObject()) {
            JsonNode st = thrown.get("extendedStackTrace");
            if (st != null && st.isTextual()) {
                return st.asText();
            }
            String head = str(thrown, "name");
            String msg = str(thrown, "message");
            StringBuilder out = new StringBuilder(head == null ? "" : head);
            if (msg != null) {
                out.append(out.length() > 0 ? ": " : "").append(msg);
            }
            if (st != null && st.isArray()) {
                for (JsonNode frame : st) {
                    out.append("\n\tat ").append(str(frame, "class")).append('.').append(str(frame, "method"))
                            .append('(').append(str(frame, "file")).append(':').append(str(frame, "line")).append(')');
                }
            }
            return out.length() == 0 ? null : out.toString();
        }
        String type = str(r, "error.type");
        String msg = str(r, "error.message");
        if (type == null && msg == null) {
            return null;
        }
        return type == null ? msg : msg == null ? type : type + ": " + msg;
    }

    private static Long time(JsonNode r, UTF8String zone) {
        String at = str(r, "@timestamp");
        if (at != null) {
            try {
                return DateTimeUtils.instantToMicros(OffsetDateTime.parse(at, DateTimeFormatter.ISO_OFFSET_DATE_TIME)
                        .toInstant());
            } catch (DateTimeException e) {
                if (zone == null) {
                    return null;
                }
                try {
                    LocalDateTime local = LocalDateTime.parse(at.replace(' ', 'T').replace(',', '.'));
                    return DateTimeUtils.instantToMicros(local.atZone(RegexLayout.zone(zone.toString())).toInstant());
                } catch (DateTimeException e2) {
                    return null;
                }
            }
        }
        JsonNode instant = r.get("instant");
        if (instant != null && instant.has("epochSecond")) {
            long s = instant.get("epochSecond").asLong();
            long nanos = instant.has("nanoOfSecond") ? instant.get("nanoOfSecond").asLong() : 0;
            return DateTimeUtils.instantToMicros(Instant.ofEpochSecond(s, nanos));
        }
        JsonNode millis = r.get("timeMillis");
        if (millis != null && millis.canConvertToLong()) {
            return millis.asLong() * 1000L;
        }
        return null;
    }
}
