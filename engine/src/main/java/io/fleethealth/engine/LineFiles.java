package io.fleethealth.engine;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import org.apache.spark.sql.connector.catalog.SupportsRead;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCapability;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.connector.read.ScanBuilder;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

/**
 * A Spark data source that reads local files as records, streaming: a file's lines with their
 * numbers (never the whole file in one string), or a whole file as one record.
 *
 * <pre>
 *   spark.read.format("io.fleethealth.engine.LineFiles")
 *        .option("paths", "/a/server.log\0/a/jstack.txt")   // NUL-separated
 *        .option("modes", "lw")                              // one letter per path, see {@link Mode}
 *        .load()
 * </pre>
 *
 * Rows: {@code file_index} (position of the file in {@code paths}), {@code line_number} (from 1;
 * a whole file is record 1), {@code record}, {@code cut} (bytes of this record not kept because a
 * record holds at most {@code max_record_bytes}; 0 almost always).
 *
 * Lines end at "\n"; trailing "\r"s are removed; a last line without "\n" is a line; an empty file
 * has no records. Text that is not valid UTF-8 is decoded as Spark decodes it (U+FFFD).
 */
public final class LineFiles implements TableProvider {
    public static final StructType SCHEMA = new StructType()
            .add("file_index", DataTypes.IntegerType, false)
            .add("line_number", DataTypes.IntegerType, false)
            .add("record", DataTypes.StringType, false)
            .add("cut", DataTypes.LongType, false);

    @Override
    public StructType inferSchema(CaseInsensitiveStringMap options) {
        return SCHEMA;
    }

    @Override
    public Table getTable(StructType schema, Transform[] partitioning, Map<String, String> properties) {
        return new FilesTable(ReadOptions.of(properties));
    }

    static final class FilesTable implements Table, SupportsRead {
        private final ReadOptions options;

        FilesTable(ReadOptions options) {
            this.options = options;
        }

        @Override
        public String name() {
            return "LineFiles(" + options.paths.length + " files)";
        }

        @Override
        @SuppressWarnings("deprecation")
        public StructType schema() {
            return SCHEMA;
        }

        @Override
        public Set<TableCapability> capabilities() {
            return EnumSet.of(TableCapability.BATCH_READ);
        }

        @Override
        public ScanBuilder newScanBuilder(CaseInsensitiveStringMap ignored) {
            return () -> new FilesScan(options);
        }
    }
}
