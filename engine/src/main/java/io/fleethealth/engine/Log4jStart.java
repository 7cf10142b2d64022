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
 * Whether a log line starts a log4j record, as a Spark SQL function {@code f(line)}: it opens with
 * the format's timestamp ({@code [yyyy-MM-dd HH:mm:ss,SSS] } for Kafka, {@code yyyy-MM-dd
 * HH:mm:ss,SSS } for ZooKeeper), tested on its first bytes (a regex would decode the line).
 */
public final class Log4jStart implements UnboundFunction, ScalarFunction<Boolean> {
    private final Log4jRecords.Format format;

    public Log4jStart(Log4jRecords.Format format) {
        this.format = format;
    }

    @Override
    public String name() {
        return format.name().toLowerCase() + "_start";
    }

    @Override
    public String description() {
        return name() + "(line): whether the line starts a " + format.name().toLowerCase() + " log4j record";
    }

    @Override
    public BoundFunction bind(StructType inputType) {
        if (inputType.fields().length != 1) {
            throw new UnsupportedOperationException(name() + " takes (line)");
        }
        return this;
    }

    @Override
    public DataType[] inputTypes() {
        return new DataType[] {DataTypes.StringType};
    }

    @Override
    public DataType resultType() {
        return DataTypes.BooleanType;
    }

    @Override
    public Boolean produceResult(InternalRow input) {
        return invoke(input.isNullAt(0) ? null : input.getUTF8String(0));
    }

    @Override
    public boolean isResultNullable() {
        return false;
    }

    /** The magic method Spark calls; a NULL line starts nothing. */
    public boolean invoke(UTF8String line) {
        if (line == null) {
            return false;
        }
        int n = line.numBytes();
        if (format == Log4jRecords.Format.KAFKA) {
            return n >= 26 && line.getByte(0) == '[' && Log4jRecords.isTimestamp(line, 1)
                    && line.getByte(24) == ']' && line.getByte(25) == ' ';
        }
        return n >= 24 && Log4jRecords.isTimestamp(line, 0) && line.getByte(23) == ' ';
    }
}
