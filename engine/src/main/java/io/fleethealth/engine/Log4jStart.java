package io.fleethealth.engine;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Whether a log line starts a log4j record, as a Spark SQL function {@code f(line)}: it opens with
 * the timestamp of any known layout ({@link Log4jLayouts#isStart}), whatever the source's usual
 * layout, tested on its first bytes (a regex would decode the line).
 */
public final class Log4jStart extends StringFunction<Boolean> {
    public Log4jStart(Log4jRecords.Format format) {
        super(format.name().toLowerCase() + "_start", new String[] {"line"}, DataTypes.BooleanType,
                "whether the line starts a " + format.name().toLowerCase() + " log4j record");
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
        return Log4jLayouts.isStart(line);
    }
}
