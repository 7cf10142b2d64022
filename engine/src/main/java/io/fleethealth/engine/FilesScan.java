package io.fleethealth.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.connector.read.Batch;
import org.apache.spark.sql.connector.read.InputPartition;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.sql.connector.read.PartitionReaderFactory;
import org.apache.spark.sql.connector.read.Scan;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.types.StructType;

/**
 * The files of a read packed into tasks the way Spark packs a file scan (largest first, up to
 * spark.sql.files.maxPartitionBytes, each file costing spark.sql.files.openCostInBytes more). A file of
 * lines larger than a task's share is cut at line ends into parts that start with a known line number
 * (see {@link Part}); a whole-file record is never cut.
 */
final class FilesScan implements Scan, Batch {
    private final ReadOptions options;

    FilesScan(ReadOptions options) {
        this.options = options;
    }

    @Override
    public StructType readSchema() {
        return LineFiles.SCHEMA;
    }

    @Override
    public String description() {
        return "LineFiles [" + options.paths.length + " files]";
    }

    @Override
    public Batch toBatch() {
        return this;
    }

    @Override
    public InputPartition[] planInputPartitions() {
        SQLConf conf = SQLConf.get();
        long openCost = conf.filesOpenCostInBytes();
        long total = 0;
        long[] sizes = new long[options.paths.length];
        for (int i = 0; i < sizes.length; i++) {
            sizes[i] = size(options.paths[i]);
            total += sizes[i] + openCost;
        }
        long split = Math.min(conf.filesMaxPartitionBytes(), Math.max(openCost, total / options.parallelism));
        List<Part> parts = new ArrayList<>();
        for (int i = 0; i < sizes.length; i++) {
            parts.addAll(Part.of(i, options.paths[i], options.modes[i], sizes[i], split, options.maxRecordBytes));
        }
        parts.sort(Comparator.comparingLong((Part p) -> p.length()).reversed()
                .thenComparingInt(p -> p.index).thenComparingLong(p -> p.start));

        List<InputPartition> groups = new ArrayList<>();
        List<Part> current = new ArrayList<>();
        long currentSize = 0;
        for (Part part : parts) {
            if (!current.isEmpty() && currentSize + part.length() > split) {
                groups.add(new FileGroup(current.toArray(new Part[0])));
                current.clear();
                currentSize = 0;
            }
            current.add(part);
            currentSize += part.length() + openCost;
        }
        if (!current.isEmpty()) {
            groups.add(new FileGroup(current.toArray(new Part[0])));
        }
        return groups.toArray(new InputPartition[0]);
    }

    private static long size(String path) {
        try {
            return Files.size(Paths.get(path));
        } catch (IOException e) {
            throw new UncheckedIOException("LineFiles: cannot read the size of " + path, e);
        }
    }

    @Override
    public PartitionReaderFactory createReaderFactory() {
        return new Readers(options.maxRecordBytes);
    }

    static final class Readers implements PartitionReaderFactory {
        private final int maxRecordBytes;

        Readers(int maxRecordBytes) {
            this.maxRecordBytes = maxRecordBytes;
        }

        @Override
        public PartitionReader<InternalRow> createReader(InputPartition partition) {
            return new RecordReader((FileGroup) partition, maxRecordBytes);
        }
    }

    /** The parts of files one task reads. */
    static final class FileGroup implements InputPartition {
        final Part[] parts;

        FileGroup(Part[] parts) {
            this.parts = parts;
        }
    }
}
