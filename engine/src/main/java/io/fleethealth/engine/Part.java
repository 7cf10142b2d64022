package io.fleethealth.engine;

import java.io.IOException;
import java.io.InputStream;
import java.io.Serializable;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/**
 * A byte range of one file that a task reads: the whole file, or lines [start, end) of a large file of
 * lines, whose first line has number firstLine. A file is cut on the driver: one sequential read that
 * counts its lines, ending each part at the first line end after every `split` bytes.
 */
final class Part implements Serializable {
    final int index;
    final String path;
    final Mode mode;
    final long start;
    final long end;
    final long firstLine;

    Part(int index, String path, Mode mode, long start, long end, long firstLine) {
        this.index = index;
        this.path = path;
        this.mode = mode;
        this.start = start;
        this.end = end;
        this.firstLine = firstLine;
    }

    long length() {
        return end - start;
    }

    static List<Part> of(int index, String path, Mode mode, long size, long split, int maxRecordBytes) {
        List<Part> parts = new ArrayList<>();
        if (size <= split || mode == Mode.WHOLE) {
            parts.add(new Part(index, path, mode, 0, size, 1));
            return parts;
        }
        if (mode == Mode.JSON) {
            // only JSON lines can be cut: decide from the head, as the reader would
            try (RecordReader head = new RecordReader(new FilesScan.FileGroup(
                    new Part[] {new Part(index, path, mode, 0, size, 1)}), maxRecordBytes)) {
                if (head.resolveMode() == Mode.WHOLE) {
                    parts.add(new Part(index, path, Mode.WHOLE, 0, size, 1));
                    return parts;
                }
            } catch (IOException e) {
                throw new UncheckedIOException("LineFiles: cannot read " + path, e);
            }
        }
        byte[] buf = new byte[1 << 20];
        long partStart = 0;
        long partFirstLine = 1;
        long lines = 0;                  // line ends in [partStart, position)
        long position = 0;
        long target = split;
        try (InputStream in = Files.newInputStream(Paths.get(path))) {
            for (int n; position < size && (n = in.read(buf, 0, (int) Math.min(buf.length, size - position))) > 0; ) {
                for (int i = 0; i < n; i++) {
                    if (buf[i] == '\n') {
                        lines++;
                        long after = position + i + 1;
                        if (after >= target && after < size) {
                            parts.add(new Part(index, path, Mode.LINES, partStart, after, partFirstLine));
                            partStart = after;
                            partFirstLine += lines;
                            lines = 0;
                            target = after + split;
                        }
                    }
                }
                position += n;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("LineFiles: cannot read " + path, e);
        }
        parts.add(new Part(index, path, Mode.LINES, partStart, size, partFirstLine));
        return parts;
    }
}
