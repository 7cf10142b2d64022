package io.fleethealth.engine;

import java.io.IOException;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Event rules as a Spark SQL function: {@code f(body, logger)} is the struct (rule, values) of the
 * first rule that matches the log message {@code body}: {@code rule} its 0-based position (NULL when
 * none matches), {@code values} the text of each field it extracts or sets ("" for none; NULL when
 * the rule extracts nothing).
 *
 * <p>The rules are data (silver/rules/*.yaml); Python passes them as JSON:
 * <pre>
 *   {"rules": [{"match": "regex", "logger": "kafka.Foo" | null, "prefixes": [...], "hints": [...],
 *               "values": null | [{"group": 2} | {"constant": "leader"} | {}, ...]}, ...]}
 * </pre>
 * A rule matches when its logger (if any) equals {@code logger} and its Java regex is found in the
 * body; {@code prefixes} (one starts every match) and {@code hints} (one occurs in every match) only
 * spare the regex. The result is what Spark SQL gives for the same rules as CASE WHEN ... RLIKE and
 * regexp_replace: the same java.util.regex, the same first-match semantics.
 */
public final class EventRules implements UDF2<String, String, Row> {
    public static final StructType RESULT = new StructType()
            .add("rule", DataTypes.IntegerType, true)
            .add("values", DataTypes.createArrayType(DataTypes.StringType, true), true);
    // the separator of the SQL form's values: a body holding it is read with U+FFFD in its place
    private static final char SEP = '\u0001';
    private static final Row NONE = RowFactory.create(null, null);

    private final Rule[] rules;

    EventRules(Rule[] rules) {
        this.rules = rules;
    }

    /** Registers the rules of `json` in `spark` as the function `name`. */
    public static void register(SparkSession spark, String name, String json) {
        spark.udf().register(name, of(json), RESULT);
    }

    static EventRules of(String json) {
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
        return new EventRules(rules.toArray(new Rule[0]));
    }

    @Override
    public Row call(String body, String logger) {
        if (body == null) {
            return NONE;
        }
        for (int i = 0; i < rules.length; i++) {
            Rule rule = rules[i];
            if (rule.mayMatch(body, logger)) {
                Matcher m = rule.pattern.matcher(body);
                if (m.find()) {
                    return RowFactory.create(i, rule.values(body, m));
                }
            }
        }
        return NONE;
    }

    static final class Rule implements Serializable {
        final Pattern pattern;
        final String logger;
        final String[] prefixes;
        final String[] hints;
        final int[] groups;          // per value: the group, or 0 for a constant
        final String[] constants;    // per value: the constant ("" for none)

        private Rule(Pattern pattern, String logger, String[] prefixes, String[] hints, int[] groups,
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
            return new Rule(pattern, r.path("logger").isTextual() ? r.path("logger").asText() : null,
                    texts(r.path("prefixes")), texts(r.path("hints")), groups, constants);
        }

        private static String[] texts(JsonNode array) {
            String[] out = new String[array.size()];
            for (int i = 0; i < out.length; i++) {
                out[i] = array.get(i).asText();
            }
            return out;
        }

        boolean mayMatch(String body, String loggerOfBody) {
            if (logger != null && !logger.equals(loggerOfBody)) {
                return false;
            }
            if (prefixes.length > 0 && !any(body, prefixes, true)) {
                return false;
            }
            return hints.length == 0 || any(body, hints, false);
        }

        private static boolean any(String body, String[] texts, boolean atStart) {
            for (String t : texts) {
                if (atStart ? body.startsWith(t) : body.contains(t)) {
                    return true;
                }
            }
            return false;
        }

        /** The values of a matched body; `m` found the match in `body`. */
        String[] values(String body, Matcher m) {
            if (groups == null) {
                return null;
            }
            if (body.indexOf(SEP) >= 0) {
                m = pattern.matcher(body.replace(SEP, '\uFFFD'));
                if (!m.find()) {
                    return null;
                }
            }
            String[] out = new String[groups.length];
            for (int k = 0; k < out.length; k++) {
                String value = groups[k] > 0 ? m.group(groups[k]) : constants[k];
                out[k] = value == null ? "" : value;
            }
            return out;
        }
    }
}
