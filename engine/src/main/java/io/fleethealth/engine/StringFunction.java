package io.fleethealth.engine;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.catalog.functions.BoundFunction;
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * What the engine's functions share as Spark SQL functions of its catalog ({@link Functions}):
 * string arguments, a fixed result type, never a NULL result. Each subclass has the "magic"
 * {@code invoke} method Spark calls from generated code with the arguments as UTF8String.
 */
public abstract class StringFunction<R> implements UnboundFunction, ScalarFunction<R> {
    private final String name;
    private final String[] arguments;
    private final DataType result;
    private final String about;

    StringFunction(String name, String[] arguments, DataType result, String about) {
        this.name = name;
        this.arguments = arguments;
        this.result = result;
        this.about = about;
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String description() {
        return name + "(" + String.join(", ", arguments) + "): " + about;
    }

    @Override
    public BoundFunction bind(StructType inputType) {
        if (inputType.fields().length != arguments.length) {
            throw new UnsupportedOperationException(name + " takes (" + String.join(", ", arguments) + ")");
        }
        return this;
    }

    @Override
    public DataType[] inputTypes() {
        DataType[] types = new DataType[arguments.length];
        java.util.Arrays.fill(types, DataTypes.StringType);
        return types;
    }

    @Override
    public DataType resultType() {
        return result;
    }

    @Override
    public boolean isResultNullable() {
        return false;
    }

    /** Argument `i` of a row of arguments (for {@link #produceResult}). */
    static UTF8String argument(InternalRow input, int i) {
        return input.isNullAt(i) ? null : input.getUTF8String(i);
    }
}
