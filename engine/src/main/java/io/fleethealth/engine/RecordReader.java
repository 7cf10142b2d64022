package io.fleethealth.engine;

import static java.nio.charset.StandardCharsets.UTF_8;

import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.regex.Pattern;

import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.connector.read.PartitionReader;
import org.apache.spark.unsafe.types.UTF8String;

/**
 * Reads the files of one task, one after the other, as records. Memory is one buffer per task:
 * 1 MiB, grown only for a longer line (up to the record limit) or a whole-file record.
 */
final class RecordReader implements PartitionReader<InternalRow> {
    // what Spark's regexp_replace(text, '\r?\n$', '') removes from a whole file: kept identical
    private static final Pattern FINAL_LINE_END = Pattern.compile("\r?\n$");
    private static final int BUFFER = 1 << 20;
    // how far a JSON file's first line is looked for ("{" or "[" alone means pretty-printed)
    private static final int JSON_HEAD = 1 << 20;

    private final FilesScan.FileGroup group;
    private final int max;
    private int k = -1;              // position in the group of the part being read
    private Part part;
    private InputStream in;
    private long remaining;          // bytes of the part not yet read into buf
    private Mode mode;               // of the open file (JSON resolved to LINES or WHOLE)
    private byte[] buf = new byte[BUFFER];
    private int start;               // buf[start, end): read from the file, not yet a record
    private int end;
    private boolean eof;
    private long lineNumber;
    private InternalRow row;

    RecordReader(FilesScan.FileGroup group, int maxRecordBytes) {
        this.group = group;
        this.max = maxRecordBytes;
    }

    @Override
    public boolean next() throws IOException {
        while (true) {
            if (in == null && !open()) {
                return false;
            }
            if (mode == Mode.WHOLE ? whole() : line()) {
                return true;
            }
            closeFile();
        }
    }

    @Override
    public InternalRow get() {
        return row;
    }

    @Override
    public void close() throws IOException {
        closeFile();
    }

    private boolean open() throws IOException {
        if (++k >= group.parts.length) {
            return false;
        }
        part = group.parts[k];
        FileChannel channel = FileChannel.open(Paths.get(part.path));
        in = Channels.newInputStream(channel.position(part.start));
        remaining = part.end - part.start;
        start = 0;
        end = 0;
        eof = false;
        lineNumber = part.firstLine - 1;
        mode = part.mode == Mode.JSON ? jsonMode() : part.mode;
        return true;
    }

    /** How the first part's file is read (JSON resolved), for the driver's planning. */
    Mode resolveMode() throws IOException {
        if (in == null && !open()) {
            throw new IllegalStateException("no part to read");
        }
        return mode;
    }

    /** in.read, ending at the end of the part. */
    private int read(byte[] b, int off, int len) throws IOException {
        if (remaining <= 0) {
            return -1;
        }
        int n = in.read(b, off, (int) Math.min(len, remaining));
        if (n > 0) {
            remaining -= n;
        }
        return n;
    }

    private void closeFile() throws IOException {
        if (in != null) {
            in.close();
            in = null;
        }
        if (buf.length > BUFFER) {
            buf = new byte[BUFFER];      // a long record's buffer is not kept for the next file
        }
    }

    /** Reads more of the file after buf[start, end), keeping at most `limit` bytes unconsumed.
     *  False at the end of the file or when `limit` bytes are there already. */
    private boolean fill(int limit) throws IOException {
        int pending = end - start;
        if (eof || pending >= limit) {
            return false;
        }
        if (end == buf.length) {
            if (start > 0) {
                System.arraycopy(buf, start, buf, 0, pending);
            } else {
                buf = Arrays.copyOf(buf, (int) Math.min(2L * buf.length, limit));
            }
            start = 0;
            end = pending;
        }
        int n = read(buf, end, Math.min(buf.length - end, limit - pending));
        if (n < 0) {
            eof = true;
            return false;
        }
        end += n;
        return true;
    }

    private static int newline(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    private boolean line() throws IOException {
        int scanned = start;
        while (true) {
            int nl = newline(buf, scanned, end);
            if (nl >= 0) {
                emit(text(buf, start, trimCr(buf, start, nl)), 0);
                start = nl + 1;
                return true;
            }
            if (end - start >= max) {
                return cutLine();
            }
            int unscanned = end - start;
            if (!fill(max)) {             // the end of the file: a last line without "\n"
                if (end > start) {
                    emit(text(buf, start, trimCr(buf, start, end)), 0);
                    start = end;
                    return true;
                }
                return false;
            }
            scanned = start + unscanned;
        }
    }

    /** A line longer than a record may be: its first `max` bytes, the rest counted as cut. */
    private boolean cutLine() throws IOException {
        UTF8String kept = text(buf, start, start + max);
        long cut = end - start - max;
        start = 0;
        end = 0;
        while (!eof) {
            int n = read(buf, 0, buf.length);
            if (n < 0) {
                eof = true;
                break;
            }
            int nl = newline(buf, 0, n);
            if (nl >= 0) {
                cut += nl;
                start = nl + 1;
                end = n;
                break;
            }
            cut += n;
        }
        emit(kept, cut);
        return true;
    }

    private boolean whole() throws IOException {
        if (lineNumber > 0) {
            return false;                 // its one record was given
        }
        while (fill(max)) {
            // read up to the record limit
        }
        if (end == start) {
            return false;                 // an empty file has no records
        }
        long cut = 0;
        if (!eof) {
            byte[] scratch = new byte[64 << 10];
            for (int n; (n = read(scratch, 0, scratch.length)) > 0; ) {
                cut += n;
            }
        }
        String text = new String(buf, start, end - start, UTF_8);
        emit(UTF8String.fromString(FINAL_LINE_END.matcher(text).replaceAll("")), cut);
        start = end;
        return true;
    }

    /** WHOLE for a pretty-printed JSON document (its first line "{" or "[" alone, and a second
     *  line), else LINES (JSON lines). Reads at most the file's head; nothing is consumed. */
    private Mode jsonMode() throws IOException {
        int limit = Math.min(max, JSON_HEAD);
        int nl;
        while ((nl = newline(buf, start, end)) < 0 && fill(limit)) {
            // look for the end of the first line
        }
        if (nl < 0) {
            return Mode.LINES;
        }
        if (nl + 1 == end && !fill(limit + 1)) {
            return Mode.LINES;            // one line only
        }
        int from = start;
        int to = trimCr(buf, from, nl);
        while (from < to && buf[from] == ' ') {
            from++;
        }
        while (to > from && buf[to - 1] == ' ') {
            to--;
        }
        return to - from == 1 && (buf[from] == '{' || buf[from] == '[') ? Mode.WHOLE : Mode.LINES;
    }

    private static int trimCr(byte[] b, int from, int to) {
        while (to > from && b[to - 1] == '\r') {
            to--;
        }
        return to;
    }

    /** Bytes as Spark holds text: ASCII as is; anything else decoded as Spark decodes it (a byte
     *  that is not UTF-8 becomes U+FFFD), so a line reads the same as a split of the file's string. */
    private static UTF8String text(byte[] b, int from, int to) {
        for (int i = from; i < to; i++) {
            if (b[i] < 0) {
                return UTF8String.fromString(new String(b, from, to - from, UTF_8));
            }
        }
        return UTF8String.fromBytes(b, from, to - from);
    }

    private void emit(UTF8String record, long cut) {
        if (lineNumber == Integer.MAX_VALUE) {
            throw new IllegalStateException(part.path + " has more lines than a line number can count");
        }
        row = new GenericInternalRow(new Object[] {part.index, (int) ++lineNumber, record, cut});
    }
}
