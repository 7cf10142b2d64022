"""The engine's streaming reader (engine/, io.fleethealth.engine.LineFiles) gives exactly the records
bronze gave when it read each file as one string and split it, on every shape of text (CRLF, no final
newline, empty lines and files, bytes that are not UTF-8, pretty-printed and JSON-lines JMX), files
packed several to a task or one file alone; a record over the limit is kept up to it and the rest is
counted, never dropped unsaid. bronze.files names the container runtime's wrapper of a file's lines
(the same from the bronze job's one pass as from a read of the records), which silver unwraps."""
from __future__ import annotations

import json
import random
from datetime import datetime, timezone
from pathlib import Path

import pytest
from pyspark.sql import functions as F

from fleethealth.bronze import tables as bronze
from fleethealth.pull.landing import Landed

pytestmark = pytest.mark.spark
HOUR = datetime(2026, 11, 20, 10, tzinfo=timezone.utc)

SHAPES = [
    b"", b"\n", b"\n\n", b"a", b"a\n", b"a\nb", b"a\n\nb\n\n", b"a\r\n", b"a\r\r\n\r\n", b"x\r", b"\r",
    b"\r\n", b"caf\xc3\xa9\n\xff\xfe bad\n", b"\xe2\x82\nhalf a character\n", b"{\n \"a\": 1\n}\n",
    b"{\n", b"{", b" { \r\n1\n", b"[\n1,\n2\n]\n\n", b'{"a":1}\n{"b":2}', b'{"a":1}\n', b"dump\n\n",
    b"dump\r\n", b"dump\n\r", b"dump\n\xc2\x85", b"a\n" * 5000,
]


def old_bronze(spark, paths: list[str], modes: str):
    """The reference: bronze as it was, each file one string (spark.read.text(wholetext)) split by
    Spark SQL. (file_index, line_number, record) rows."""
    mode_of = F.element_at(F.lit(list(modes)), F.col("file_index") + 1)
    text = (spark.read.text(paths, wholetext=True).select(
        "value", F.regexp_extract("_metadata.file_name", r"^f(\d+)\.log$", 1).cast("int").alias("file_index")))
    split = "split(value, '\\n')"
    split = f"CASE WHEN element_at({split}, -1) = '' THEN slice({split}, 1, size({split}) - 1) ELSE {split} END"
    lines = F.expr(f"CASE WHEN contains(value, '\\r') THEN transform({split}, line -> trim(TRAILING '\\r' FROM line)) "
                   f"ELSE {split} END")
    first = F.trim(F.element_at(lines, 1))
    whole = F.array(F.regexp_replace("value", "\r?\n$", ""))
    records = (F.when(F.length("value") == 0, F.array().cast("array<string>"))
               .when(mode_of == "w", whole)
               .when((mode_of == "j") & (F.size(lines) > 1) & first.isin("[", "{"), whole)
               .otherwise(lines))
    return sorted((r.file_index, r.pos + 1, r.record) for r in
                  text.select("file_index", F.posexplode(records).alias("pos", "record")).collect())


def engine(spark, paths: list[str], modes: str, **options):
    reader = (spark.read.format(bronze.ENGINE_READER).option("paths", "\0".join(paths)).option("modes", modes))
    for key, value in options.items():
        reader = reader.option(key, str(value))
    return reader.load()


def rows(df):
    return sorted((r.file_index, r.line_number, r.record) for r in df.collect())


def write(folder: Path, contents: list[bytes]) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, data in enumerate(contents):
        path = folder / f"f{i:04d}.log"
        path.write_bytes(data)
        paths.append(str(path))
    return paths


@pytest.mark.parametrize("mode", ["l", "w", "j"])
def test_every_shape_reads_as_the_split_of_the_whole_file(spark, tmp_path, mode):
    paths = write(tmp_path, SHAPES)
    modes = mode * len(paths)
    assert rows(engine(spark, paths, modes)) == old_bronze(spark, paths, modes)


def test_random_text_in_many_tasks_reads_as_the_split_of_the_whole_file(spark, tmp_path):
    rng = random.Random(29)
    alphabet = [b"a", b"b", b"\n", b"\n", b"\r", b" ", b"{", b"[", b"\xc3\xa9", b"\xff"]
    contents = [b"".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60))) for _ in range(300)]
    paths = write(tmp_path, contents)
    modes = "".join(rng.choice("lwj") for _ in paths)
    spark.conf.set("spark.sql.files.maxPartitionBytes", "200")
    try:
        df = engine(spark, paths, modes)
        assert df.rdd.getNumPartitions() > 10          # files packed into many tasks
        assert rows(df) == old_bronze(spark, paths, modes)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def test_a_file_larger_than_a_task_is_cut_at_line_ends_and_numbered_as_one(spark, tmp_path):
    rng = random.Random(30)

    def line() -> bytes:
        return b"".join(rng.choice([b"a", b"b", b" ", b"\r", b"\xc3\xa9"]) for _ in range(rng.randrange(0, 80)))

    logs = [b"\n".join(line() for _ in range(rng.randrange(200, 600))) + rng.choice([b"", b"\n"]) for _ in range(4)]
    long_line = b"x" * 5000 + b"\n" + b"y\n" * 3000                      # a line longer than a part
    json_lines = b"".join(b'{"n": %d}\n' % i for i in range(2000))
    pretty = b"{\n" + b"".join(b' "k%d": %d,\n' % (i, i) for i in range(2000)) + b' "end": 0\n}\n'
    paths = write(tmp_path, [*logs, long_line, json_lines, pretty, b"a\n"])
    modes = "llllljjl"
    spark.conf.set("spark.sql.files.maxPartitionBytes", "1000")
    try:
        df = engine(spark, paths, modes)
        assert df.rdd.getNumPartitions() > 60               # the big files in parts of about 1000 bytes
        assert rows(df) == old_bronze(spark, paths, modes)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def test_a_record_over_the_limit_is_kept_up_to_it_and_the_rest_counted(spark, tmp_path):
    paths = write(tmp_path, [b"x" * 3000 + b"\nshort\r\n" + b"y" * 2500, b"z" * 1500 + b"\n\n", b"q" * 999 + b"\n"])
    got = sorted((r.file_index, r.line_number, len(r.record), r.record[:1], r.cut)
                 for r in engine(spark, paths, "lwl", max_record_bytes=1000).collect())
    assert got == [(0, 1, 1000, "x", 2000), (0, 2, 5, "s", 0), (0, 3, 1000, "y", 1500),
                   (1, 1, 1000, "z", 502), (2, 1, 999, "q", 0)]


def test_bronze_files_says_what_was_cut_and_records_reconcile(spark, tmp_path, monkeypatch):
    landing = tmp_path / "landing"
    names = ["c/k1/kafka/server.log", "c/k1/jstack/jstack-2026-11-20T10-30-00.txt", "c/k2/kafka/server.log"]
    data = [b"ok\n" + b"x" * 300 + b"\nok\n", b"t" * 250, b"fine\n"]
    landed = []
    for name, content in zip(names, data):
        (landing / name).parent.mkdir(parents=True, exist_ok=True)
        (landing / name).write_bytes(content)
        cluster, host, source, _ = name.split("/")
        landed.append(Landed(cluster, host, source, name, len(content), "0" * 64, 0.0, 0.0, path=name))
    monkeypatch.setattr(bronze, "MAX_RECORD_BYTES", 100)
    read = bronze.read(spark, landed, landing, HOUR)
    files = {r.file: (r.status, r.records, r.reason) for r in bronze.files(spark, landed, read, HOUR).collect()}
    assert files == {
        names[0]: ("read", 3, "200 bytes not kept: a record holds at most 100 bytes"),
        names[1]: ("read", 1, "150 bytes not kept: a record holds at most 100 bytes"),
        names[2]: ("read", 1, None),
    }
    assert read.count() == sum(n for _, n, _ in files.values())
    assert bronze.records(spark, landed, landing, HOUR).columns == bronze.SCHEMA.fieldNames()


def test_paths_and_modes_must_agree(spark, tmp_path):
    paths = write(tmp_path, [b"a\n"])
    with pytest.raises(Exception, match="1 paths but 2 modes"):
        engine(spark, paths, "ll").collect()


def test_bronze_files_names_the_wrapper_of_container_files_and_silver_unwraps_their_sources(spark, tmp_path):
    from fleethealth.silver import tables as silver

    inner = "[2026-11-20 10:00:00,123] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)"
    stamp = "2026-11-20T10:00:00.123456789Z"
    contents = {
        "c/k1/kafka/0.log": f"2026-11-20T10:00:00.123456789Z stdout F {inner}\n",
        # Docker's json-file driver writes no spaces
        "c/k1/kafka/4f2e-json.log": json.dumps({"log": f"{inner}\n", "stream": "stdout", "time": stamp},
                                               separators=(",", ":")) + "\n",
        "c/k2/kafka/kafka-0.log": f"2026-11-20T10:00:00.123456789Z {inner}\n",
        "c/k2/kafka/server.log": f"{inner}\n",
        # plain lines, then one wrapped: the file is wrapped (a line is recognised by its first bytes)
        "c/k3/kafka/server.log": f"{inner}\n{inner}\n2026-11-20T10:00:01.5Z stderr P a piece\n",
        "c/k3/zookeeper/zookeeper.log": "2026-11-20 10:00:00,123 [myid:1] - INFO  [main:QuorumPeer@1] - up\n",
    }
    landing = tmp_path / "landing"
    landed = []
    for name, text in contents.items():
        (landing / name).parent.mkdir(parents=True, exist_ok=True)
        (landing / name).write_text(text)
        cluster, host, source, _ = name.split("/")
        landed.append(Landed(cluster, host, source, name, len(text.encode()), "0" * 64, 0.0, 0.0, path=name))
    read = bronze.read(spark, landed, landing, HOUR)
    aggregated = {r.file: r.wrapper for r in bronze.files(spark, landed, read, HOUR).collect()}
    rows, cuts = bronze.records_observing_cuts(read)
    rows.write.format("noop").mode("overwrite").save()          # the one pass the bronze job makes
    observed = {r.file: r.wrapper for r in bronze.files(spark, landed, rows, HOUR, cuts).collect()}
    assert aggregated == observed == {
        "c/k1/kafka/0.log": "cri", "c/k1/kafka/4f2e-json.log": "docker", "c/k2/kafka/kafka-0.log": "kubectl",
        "c/k2/kafka/server.log": None, "c/k3/kafka/server.log": "cri", "c/k3/zookeeper/zookeeper.log": None}
    files = bronze.files(spark, landed, read, HOUR)
    assert silver.wrapped_sources(read, files) == silver.wrapped_sources(read, None) == {"kafka"}
    plain = read.where(~F.col("file").isin("c/k1/kafka/0.log", "c/k1/kafka/4f2e-json.log",
                                           "c/k2/kafka/kafka-0.log", "c/k3/kafka/server.log"))
    assert silver.wrapped_sources(plain, None) == set()
