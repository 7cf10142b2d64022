package io.fleethealth.engine;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;
import org.apache.spark.sql.catalyst.util.GenericArrayData;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Event rules as a Spark SQL function: {@code f(message, detail, logger)} is the struct (rule, values)
 * of the first rule that matches the log record's body (message and detail joined by \n, as
 * concat_ws joins them): {@code rule} its 0-based position (NULL when none matches), {@code values}
 * the text of each field it extracts or sets ("" for none; NULL when the rule extracts nothing).
 *
 * <p>The rules are data (silver/rules/*.yaml); Python passes them as JSON:
 * <pre>
 *   {"rules": [{"match": "regex", "logger": "kafka.Foo" | null, "prefixes": [...], "hints": [...],
 *               "values": null | [{"group": 2} | {"constant": "leader"} | {}, ...]}, ...]}
 * </pre>
 * A rule matches when its logger (if any) equals {@code logger} or one is the other's simple name
 * (log4j's {@code %c{1}}: {@code LogCleaner} for {@code kafka.log.LogCleaner}) and its Java regex is found in the
 * body; {@code prefixes} (one starts every match) and {@code hints} (one occurs in every match) only
 * spare the regex, and are tested on the UTF-8 bytes: a body is decoded to a Java String only for a
 * rule whose regex must run. The result is what Spark SQL gives for the same rules as CASE WHEN ...
 * RLIKE and regexp_replace: the same java.util.regex, the same first-match semantics.
 */
public final class EventRules extends StringFunction<InternalRow> {
    public static final StructType RESULT = new StructType()
            .add("rule", DataTypes.IntegerType, true)
            .add("values", DataTypes.createArrayType(DataTypes.StringType, true), true);
    // the separator of the SQL form's values: a body holding it is read with U+FFFD in its place
    private static final char SEP = '\u0001';
    private static final UTF8String NEW_LINE = UTF8String.fromString("\n");

    private final Rule[] rules;

    EventRules(String name, Rule[] rules) {
        super(name, new String[] {"message", "detail", "logger"}, RESULT,
                "struct<rule, values> of the first event rule that matches");
        this.rules = rules;
    }

    static EventRules of(String name, String json) {
        JsonNode root;
        try {
            root = new ObjectMapper().readTree(json);
        } catch (IOException e) {
            throw new UncheckedIOException("EventRules: the rules are not JSON", e);
        }
        List<Rule> rules = new ArrayList<>();
        for (JsonNode r : root.path("rules")) {
            rules.add(Rule.of(r));
        }
        return new EventRules(name, rules.toArray(new Rule[0]));
    }

    @Override
    public InternalRow produceResult(InternalRow input) {
        return invoke(argument(input, 0), argument(input, 1), argument(input, 2));
    }

    /** The magic method Spark calls (generated code, no conversion of its arguments). */
    public InternalRow invoke(UTF8String message, UTF8String detail, UTF8String logger) {
        UTF8String body = message == null ? (detail == null ? UTF8String.EMPTY_UTF8 : detail)
                : detail == null ? message : UTF8String.concatWs(NEW_LINE, message, detail);
        long[] candidates = index().candidates(body, logger);
        String text = null;
        for (int w = 0; w < candidates.length; w++) {
            for (long bits = candidates[w]; bits != 0; bits &= bits - 1) {
                int i = w * 64 + Long.numberOfTrailingZeros(bits);
                Rule rule = rules[i];
                if (text == null) {
                    text = body.toString();
                }
                Matcher m = rule.pattern.matcher(text);
                if (m.find()) {
                    return new GenericInternalRow(new Object[] {i, rule.values(text, m)});
                }
            }
        }
        return new GenericInternalRow(new Object[] {null, null});
    }

    // built where the function runs (not shipped inside the plan): about a millisecond per task
    private transient volatile Index index;

    private Index index() {
        Index i = index;
        if (i == null) {
            i = new Index(rules);
            index = i;
        }
        return i;
    }

    /**
     * The rules a body may match, in one pass for all hints (each rule needs one of its hints), a
     * trie walk for all prefixes (one of its prefixes, if it has any) and a lookup by logger.
     */
    static final class Index {
        private final ByteSets prefixes;
        private final ByteSets hints;
        private final long[] noPrefix;
        private final long[] noHint;
        private final long[] noLogger;
        // a rule's logger, and its simple name (a record written with %c{1}: `LogCleaner`)
        private final Map<UTF8String, long[]> byLogger = new HashMap<>();
        // rules whose logger is a simple name: a record's qualified logger matches by its own
        private final Map<UTF8String, long[]> bySimpleName = new HashMap<>();

        Index(Rule[] rules) {
            int words = Math.max(1, (rules.length + 63) / 64);
            noPrefix = new long[words];
            noHint = new long[words];
            noLogger = new long[words];
            List<byte[]> prefixTexts = new ArrayList<>();
            List<Integer> prefixIds = new ArrayList<>();
            List<byte[]> hintTexts = new ArrayList<>();
            List<Integer> hintIds = new ArrayList<>();
            for (int i = 0; i < rules.length; i++) {
                Rule r = rules[i];
                collect(r.prefixes, i, noPrefix, prefixTexts, prefixIds);
                collect(r.hints, i, noHint, hintTexts, hintIds);
                if (r.logger == null) {
                    set(noLogger, i);
                } else {
                    set(byLogger.computeIfAbsent(r.logger, k -> new long[words]), i);
                    UTF8String simple = simpleName(r.logger);
                    set(simple == r.logger ? bySimpleName.computeIfAbsent(simple, k -> new long[words])
                            : byLogger.computeIfAbsent(simple, k -> new long[words]), i);
                }
            }
            prefixes = new ByteSets(prefixTexts, prefixIds.stream().mapToInt(x -> x).toArray(), rules.length);
            hints = new ByteSets(hintTexts, hintIds.stream().mapToInt(x -> x).toArray(), rules.length);
        }

        /** A rule without texts (or with an empty one, which every body holds) needs no test. */
        private static void collect(UTF8String[] texts, int rule, long[] none, List<byte[]> out, List<Integer> ids) {
            boolean always = texts.length == 0;
            for (UTF8String t : texts) {
                always |= t.numBytes() == 0;
                out.add(t.getBytes());
                ids.add(rule);
            }
            if (always) {
                set(none, rule);
            }
        }

        private static void or(long[] out, long[] bits) {
            if (bits != null) {
                for (int w = 0; w < out.length; w++) {
                    out[w] |= bits[w];
                }
            }
        }

        /** Loggers match when equal or when one is the other's simple name (log4j's %c{1}): the text
         * after the last dot; the name itself (the same object) when it has none. */
        static UTF8String simpleName(UTF8String logger) {
            int n = logger.numBytes();
            for (int i = n - 1; i >= 0; i--) {
                if (logger.getByte(i) == '.') {
                    return logger.substring(logger.numChars() - (n - 1 - i), logger.numChars());
                }
            }
            return logger;
        }

        private static void set(long[] bits, int i) {
            bits[i >>> 6] |= 1L << (i & 63);
        }

        long[] candidates(UTF8String body, UTF8String logger) {
            long[] out = noLogger.clone();
            if (!byLogger.isEmpty() && logger != null) {
                or(out, byLogger.get(logger));
                UTF8String simple = bySimpleName.isEmpty() ? logger : simpleName(logger);
                if (simple != logger) {
                    or(out, bySimpleName.get(simple));
                }
            }
            long[] p = noPrefix.clone();
            prefixes.startOf(body, p);
            boolean any = false;
            for (int w = 0; w < out.length; w++) {
                out[w] &= p[w];
                any |= out[w] != 0;
            }
            if (!any) {
                return out;
            }
            long[] h = noHint.clone();
            hints.occurIn(body, h);
            for (int w = 0; w < out.length; w++) {
                out[w] &= h[w];
            }
            return out;
        }
    }

    static final class Rule implements Serializable {
        final Pattern pattern;
        final UTF8String logger;
        final UTF8String[] prefixes;
        final UTF8String[] hints;
        final int[] groups;          // per value: the group, or 0 for a constant
        final String[] constants;    // per value: the constant ("" for none)

        private Rule(Pattern pattern, UTF8String logger, UTF8String[] prefixes, UTF8String[] hints, int[] groups,
                     String[] constants) {
            this.pattern = pattern;
            this.logger = logger;
            this.prefixes = prefixes;
            this.hints = hints;
            this.groups = groups;
            this.constants = constants;
        }

        static Rule of(JsonNode r) {
            String match = r.path("match").asText();
            Pattern pattern = Pattern.compile(match);
            JsonNode values = r.path("values");
            int[] groups = null;
            String[] constants = null;
            if (values.isArray()) {
                int groupCount = pattern.matcher("").groupCount();
                groups = new int[values.size()];
                constants = new String[values.size()];
                for (int k = 0; k < groups.length; k++) {
                    JsonNode v = values.get(k);
                    groups[k] = v.path("group").asInt(0);
                    constants[k] = v.path("constant").asText("");
                    if (groups[k] < 0 || groups[k] > groupCount) {
                        throw new IllegalArgumentException("EventRules: " + match + " has no group " + groups[k]);
                    }
                }
            }
            return new Rule(pattern, r.path("logger").isTextual() ? UTF8String.fromString(r.path("logger").asText()) : null,
                    texts(r.path("prefixes")), texts(r.path("hints")), groups, constants);
        }

        private static UTF8String[] texts(JsonNode array) {
            UTF8String[] out = new UTF8String[array.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = UTF8String.fromString(array.get(i).asText());
            }
            return out;
        }

        /** The values of a matched body; `m` found the match in `body`. */
        ArrayData values(String body, Matcher m) {
            if (groups == null) {
                return null;
            }
            if (body.indexOf(SEP) >= 0) {
                m = pattern.matcher(body.replace(SEP, '\uFFFD'));
                if (!m.find()) {
                    return null;
                }
            }
            Object[] out = new Object[groups.length];
            for (int k = 0; k < out.length; k++) {
                String value = groups[k] > 0 ? m.group(groups[k]) : constants[k];
                out[k] = UTF8String.fromString(value == null ? "" : value);
            }
            return new GenericArrayData(out);
        }
    }
}
