"""io.fleethealth.engine.LocalFiles: Hadoop's local file system with java.nio's chmod and link check
(no chmod / readlink process per file), set for a local master's sessions by runtime.spark_conf; what
Hadoop's own gives, through both of Hadoop's APIs (FileSystem: Parquet files; FileContext: Delta's
commits), and a Delta table written and read through it."""
from __future__ import annotations

import os
import stat

import pytest

from fleethealth.runtime.spark_conf import process_umask, spark_conf

pytestmark = pytest.mark.spark


def _hadoop(spark):
    jvm = spark._jvm
    conf = spark._jsc.hadoopConfiguration()
    return jvm, conf, jvm.org.apache.hadoop.fs


def test_a_local_masters_settings_name_it_and_a_clusters_do_not():
    local = spark_conf(master="local[2]", deployment=False)
    assert local["spark.hadoop.fs.file.impl"] == "io.fleethealth.engine.LocalFiles$FileSystem"
    assert local["spark.hadoop.fs.AbstractFileSystem.file.impl"] == "io.fleethealth.engine.LocalFiles$Fs"
    cluster = spark_conf(master="spark://127.0.0.1:7077", deployment=False)
    assert "spark.hadoop.fs.file.impl" not in cluster and "spark.hadoop.fs.AbstractFileSystem.file.impl" not in cluster


def test_permissions_and_link_status_as_hadoop_gives_them(spark, tmp_path):
    jvm, conf, fs_api = _hadoop(spark)
    fs = fs_api.FileSystem.get(jvm.java.net.URI("file:///"), conf)
    assert fs.getClass().getName() == "io.fleethealth.engine.LocalFiles$FileSystem"
    assert fs.getRaw().getClass().getName() == "io.fleethealth.engine.LocalFiles$Raw"
    perm = fs_api.permission.FsPermission

    path = fs_api.Path(f"file:{tmp_path}/a/b/data.bin")
    out = fs.create(path, True)
    out.write(bytearray(b"12345"))
    out.close()
    # created with the default permission less the process's umask, its checksum beside it, folders made on the way
    assert stat.S_IMODE(os.stat(tmp_path / "a/b/data.bin").st_mode) == 0o666 & ~process_umask()
    assert (tmp_path / "a/b/.data.bin.crc").is_file()
    assert stat.S_IMODE(os.stat(tmp_path / "a/b").st_mode) == 0o777 & ~process_umask()

    fs.setPermission(path, perm(jvm.java.lang.Short.parseShort("640", 8)))
    assert stat.S_IMODE(os.stat(tmp_path / "a/b/data.bin").st_mode) == 0o640
    assert fs.getFileStatus(path).getPermission().toString() == "rw-r-----"
    # a sticky bit (java.nio cannot set one): Hadoop's own way
    fs.setPermission(fs_api.Path(f"file:{tmp_path}/a"), perm(jvm.java.lang.Short.parseShort("1777", 8)))
    assert stat.S_IMODE(os.stat(tmp_path / "a").st_mode) == 0o1777
    with pytest.raises(Exception, match="FileNotFoundException"):
        fs.setPermission(fs_api.Path(f"file:{tmp_path}/missing"), perm(jvm.java.lang.Short.parseShort("644", 8)))

    # FileContext (Delta's commits rename through it): the link status Hadoop's own file system gives,
    # of a file, of a link by a qualified path (Hadoop's readlink reads "file:/...": no link) and by a bare one
    fc = fs_api.FileContext.getFileContext(jvm.java.net.URI("file:///"), conf)
    hadoops = fs_api.RawLocalFileSystem()
    hadoops.initialize(jvm.java.net.URI("file:///"), conf)
    os.symlink(tmp_path / "a/b/data.bin", tmp_path / "link")
    for each in (path, fs_api.Path(f"file:{tmp_path}/link"), fs_api.Path(f"{tmp_path}/link")):
        ours, theirs = fc.getFileLinkStatus(each), hadoops.getFileLinkStatus(each)
        assert (ours.isSymlink(), ours.getLen(), ours.getPath().toString()) == \
               (theirs.isSymlink(), theirs.getLen(), theirs.getPath().toString())
    assert fc.getFileLinkStatus(fs_api.Path(f"{tmp_path}/link")).isSymlink()
    assert fc.getFileLinkStatus(path).getLen() == 5
    with pytest.raises(Exception, match="FileNotFoundException"):
        fc.getFileLinkStatus(fs_api.Path(f"file:{tmp_path}/missing"))

    # a rename without overwrite refuses an existing target, as Delta's commit needs
    other = fs_api.Path(f"file:{tmp_path}/a/b/other.bin")
    fs.create(other, True).close()
    none = spark.sparkContext._gateway.new_array(jvm.org.apache.hadoop.fs.Options.Rename, 1)
    none[0] = jvm.org.apache.hadoop.fs.Options.Rename.NONE
    with pytest.raises(Exception, match="FileAlreadyExistsException"):
        fc.rename(other, path, none)
    fc.rename(other, fs_api.Path(f"file:{tmp_path}/a/b/moved.bin"), none)
    assert (tmp_path / "a/b/moved.bin").is_file() and not (tmp_path / "a/b/other.bin").exists()


def test_a_delta_table_through_it(spark, tmp_path):
    path = str(tmp_path / "t")
    spark.range(10).write.format("delta").save(path)
    spark.range(10, 15).write.format("delta").mode("append").save(path)
    assert spark.read.format("delta").load(path).count() == 15
    log = sorted(p.name for p in (tmp_path / "t/_delta_log").iterdir() if p.name.endswith(".json"))
    assert log == ["00000000000000000000.json", "00000000000000000001.json"]
    assert stat.S_IMODE(os.stat(tmp_path / "t/_delta_log/00000000000000000001.json").st_mode) == 0o666 & ~process_umask()


# a session started under `umask 077` writes a Delta table with Spark (partitioned, two commits), one with
# delta-rs, and the HTML report of a small lakehouse; prints every path under the folder and its mode
UMASK_077 = """
import os, stat, sys
from pathlib import Path
import report_lakehouse as lh
from fleethealth.lake.catalog import Lakehouse
from fleethealth.report.html import write_report
from fleethealth.runtime.session import build_session

root = Path(sys.argv[1])
spark = build_session("umask", root / "_warehouse", master="local[1]")
table = str(root / "spark" / "t")
spark.range(10).selectExpr("id", "id % 2 AS p").write.format("delta").partitionBy("p").save(table)
spark.range(10, 12).selectExpr("id", "id % 2 AS p").write.format("delta").mode("append").save(table)
spark.stop()
lh.build(root / "lakehouse")
write_report(Lakehouse.at(root / "lakehouse"), lh.START, lh.END)
for path in sorted(root.rglob("*")):
    print(oct(stat.S_IMODE(path.lstat().st_mode)), path.relative_to(root))
"""


def test_under_umask_077_no_file_or_folder_the_engine_writes_is_wider(tmp_path):
    """Hadoop's file systems applied their own umask (022): a Delta table Spark wrote under `umask 077`
    was 0644 files in 0755 folders. spark_conf gives them the process's: a session started under
    `umask 077` writes a partitioned table in two commits (Parquet, checksums, the log), delta-rs a
    lakehouse and the report its pages: no file or folder has a group or other bit."""
    import subprocess
    import sys
    from pathlib import Path

    project = Path(__file__).resolve().parents[1]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(project / "include"), str(project / "tests"),
                                                                    os.environ.get("PYTHONPATH")])))
    root = tmp_path / "umask"
    root.mkdir(mode=0o700)
    proc = subprocess.run([sys.executable, "-c", UMASK_077, str(root)], capture_output=True, text=True, env=env,
                          timeout=300, preexec_fn=lambda: os.umask(0o077))
    assert proc.returncode == 0, proc.stderr[-3000:]
    modes = [line.split(" ", 1) for line in proc.stdout.splitlines()]
    names = {name for _, name in modes}
    assert {"spark/t/_delta_log/00000000000000000001.json", "spark/t/p=0", "lakehouse/gold/incidents/_delta_log",
            "lakehouse/report/index.html"} <= names, sorted(names)
    assert any(name.startswith("spark/t/p=1/part-") and name.endswith(".parquet") for name in names)
    assert [(mode, name) for mode, name in modes if int(mode, 8) & 0o077] == []
