package io.fleethealth.engine;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * The engine's Spark SQL functions as a catalog of functions (Spark's DataSource V2 function API:
 * arguments as Spark's own UTF8String, results as InternalRow, called from generated code).
 *
 * <p>Configured as {@code spark.sql.catalog.<name>=io.fleethealth.engine.Functions}; then
 * {@code <name>.engine.kafka_log(text, zone)} and {@code <name>.engine.zookeeper_log(text, zone)}
 * ({@link Log4jRecords}), {@code kafka_start(line)} and {@code zookeeper_start(line)} ({@link Log4jStart}),
 * {@code pattern_start}, {@code pattern_log} ({@link RegexLayout}), {@code json_start}, {@code json_log}
 * ({@link JsonLayout}), and each set of event rules registered by {@link #registerEvents}.
 */
public final class Functions implements FunctionCatalog {
    public static final String NAMESPACE = "engine";

    // event rules registered on the driver by name; the function reaches executors inside the plan
    private static final Map<String, EventRules> EVENTS = new ConcurrentHashMap<>();

    private final Map<String, UnboundFunction> functions = new LinkedHashMap<>();
    private String name;

    public Functions() {
        for (Log4jRecords.Format f : Log4jRecords.Format.values()) {
            Log4jRecords fn = new Log4jRecords(f);
            functions.put(fn.name(), fn);
            Log4jStart start = new Log4jStart(f);
            functions.put(start.name(), start);
        }
        // a user's log_pattern (RegexLayout) and log4j 2's JSON layout (JsonLayout)
        for (StringFunction<?> fn : new StringFunction<?>[] {new RegexLayout.Start(), new RegexLayout.Log(),
                new JsonLayout.Start(), new JsonLayout.Log()}) {
            functions.put(fn.name(), fn);
        }
    }

    /** Registers the event rules of `json` ({@link EventRules}) as the function `engine.<name>`. */
    public static void registerEvents(String name, String json) {
        EVENTS.computeIfAbsent(name, n -> EventRules.of(n, json));
    }

    @Override
    public void initialize(String name, CaseInsensitiveStringMap options) {
        this.name = name;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String[] defaultNamespace() {
        return new String[] {NAMESPACE};
    }

    @Override
    public Identifier[] listFunctions(String[] namespace) {
        if (!Arrays.equals(namespace, new String[] {NAMESPACE})) {
            return new Identifier[0];
        }
        return java.util.stream.Stream.concat(functions.keySet().stream(), EVENTS.keySet().stream())
                .map(f -> Identifier.of(namespace, f)).toArray(Identifier[]::new);
    }

    @Override
    public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
        UnboundFunction fn = null;
        if (Arrays.equals(ident.namespace(), new String[] {NAMESPACE})) {
            fn = functions.containsKey(ident.name()) ? functions.get(ident.name()) : EVENTS.get(ident.name());
        }
        if (fn == null) {
            throw new NoSuchFunctionException(ident);
        }
        return fn;
    }
}
