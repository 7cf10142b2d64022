package io.fleethealth.engine;

import java.io.File;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.attribute.PosixFilePermissions;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.ChecksumFs;
import org.apache.hadoop.fs.DelegateToFileSystem;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.FsConstants;
import org.apache.hadoop.fs.FsServerDefaults;
import org.apache.hadoop.fs.LocalFileSystem;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.local.LocalConfigKeys;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's local file system without a process per file. Without Hadoop's native library (pip's
 * pyspark has none) {@link RawLocalFileSystem} runs {@code chmod} for every file and folder it
 * creates and {@code readlink} for every rename through {@code FileContext} (Delta's commits,
 * Spark's checkpoint files): about 600 processes an hour of a small fleet, 7 ms each. These do both
 * with java.nio, and leave what java.nio cannot say (a sticky bit, a symbolic link) to Hadoop.
 * Spark settings: {@code spark.hadoop.fs.file.impl} = {@link FileSystem},
 * {@code spark.hadoop.fs.AbstractFileSystem.file.impl} = {@link Fs}.
 */
public final class LocalFiles {
    private LocalFiles() {
    }

    /** The raw local file system (no checksums) with java.nio's chmod and link check. */
    public static class Raw extends RawLocalFileSystem {
        @Override
        public void setPermission(Path p, FsPermission permission) throws IOException {
            if (permission.getStickyBit()) {
                super.setPermission(p, permission);
                return;
            }
            File file = pathToFile(p);
            try {
                Files.setPosixFilePermissions(file.toPath(), PosixFilePermissions.fromString(permission.toString()));
            } catch (NoSuchFileException e) {
                throw new FileNotFoundException("File " + file + " does not exist");
            } catch (UnsupportedOperationException e) {   // a file system without POSIX permissions
                super.setPermission(p, permission);
            }
        }

        @Override
        public FileStatus getFileLinkStatus(Path f) throws IOException {
            if (Files.isSymbolicLink(pathToFile(f).toPath())) {
                return super.getFileLinkStatus(f);
            }
            return getFileStatus(f);
        }
    }

    /** {@code fs.file.impl}: the checksummed local file system over {@link Raw}. */
    public static class FileSystem extends LocalFileSystem {
        public FileSystem() {
            super(new Raw());
        }
    }

    /** {@code fs.AbstractFileSystem.file.impl} (FileContext's): the checksummed local file system over {@link Raw}. */
    public static class Fs extends ChecksumFs {
        public Fs(URI uri, Configuration conf) throws IOException, URISyntaxException {
            super(new RawFs(uri, conf));
        }
    }

    /** FileContext's raw local file system, delegating to {@link Raw}; otherwise Hadoop's RawLocalFs
     * (whose constructors are not public). */
    public static class RawFs extends DelegateToFileSystem {
        public RawFs(URI uri, Configuration conf) throws IOException, URISyntaxException {
            super(uri, new Raw(), conf, FsConstants.LOCAL_FS_URI.getScheme(), false);
        }

        @Override
        public int getUriDefaultPort() {
            return -1;
        }

        @Override
        @SuppressWarnings("deprecation")
        public FsServerDefaults getServerDefaults() throws IOException {
            return LocalConfigKeys.getServerDefaults();
        }

        @Override
        public FsServerDefaults getServerDefaults(Path f) throws IOException {
            return LocalConfigKeys.getServerDefaults();
        }

        @Override
        public boolean isValidName(String src) {
            return true;   // any local name
        }
    }
}
