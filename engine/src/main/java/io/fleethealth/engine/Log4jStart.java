package io.fleethealth.engine;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Whether a log line starts a log4j record, as a Spark SQL function {@code f(line)}: it opens with
 * the format's timestamp ({@code [yyyy-MM-dd HH:mm:ss,SSS] } for Kafka, {@code yyyy-MM-dd
 * HH:mm:ss,SSS } for ZooKeeper), tested on its first bytes (a regex would decode the line).
 */
public final class Log4jStart extends StringFunction<Boolean> {
    private final Log4jRecords.Format format;

    public Log4jStart(Log4jRecords.Format format) {
        super(format.name().toLowerCase() + "_start", new String[] {"line"}, DataTypes.BooleanType,
                "whether the line starts a " + format.name().toLowerCase() + " log4j record");
        this.format = format;
    }

    @Override
    public Boolean produceResult(InternalRow input) {
        return invoke(argument(input, 0));
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
