"""The engine's log4j record parser (io.fleethealth.engine.Log4jRecords, `fleethealth.engine.<format>_log`)
gives what silver's former Spark SQL form gave: the format's header regex (java.util.regex through
regexp_replace), the trailing ` (logger)` regexes and try_make_timestamp. That form is kept here as the
oracle and both run on every record of the golden corpus and the samples, on crafted shapes (line
terminators other than \\n, empty groups, loggers alone on the last line, colons in ZooKeeper threads)
and on random records built from those pieces.
"""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from fleethealth.runtime.frames import local_frame
from fleethealth.silver.parsers import log4j

FIXTURES = Path(__file__).parent / "fixtures"
TRAILING_LOGGER = r" \(([\w.$-]+)\)$"


# ---- the former Spark SQL form (the oracle) ---------------------------------------------------

def _local_to_utc(ts_text: Column, timezone: Column) -> Column:
    def part(pos: int, length: int) -> Column:
        return F.substring(ts_text, pos, length).try_cast("int")
    seconds = F.concat(F.substring(ts_text, 18, 2), F.lit("."), F.substring(ts_text, 21, 3)).try_cast("decimal(16,6)")
    return F.when(part(18, 2) < 60, F.try_make_timestamp(part(1, 4), part(6, 2), part(9, 2), part(12, 2),
                                                         part(15, 2), seconds, timezone))


def _order(fmt):
    return sorted((g, name) for name, g in fmt.groups.items() if g)


def _trailing_logger(line: Column) -> Column:
    after = F.substring_index(line, " (", -1)
    return F.when(line.contains(" ("), F.nullif(F.regexp_extract(after, r"^([\w.$-]+)\)$", 1), F.lit("")))


def oracle(records: DataFrame, fmt, timezone: Column) -> DataFrame:
    first = F.substring_index("text", "\n", 1)
    rest = F.when(F.instr("text", "\n") > 0, F.expr("substr(text, instr(text, '\n') + 1)"))
    cut = F.regexp_replace(first, f"(?:{fmt.header})" + r"[\s\S]*", "".join(f"\n${g}" for g, _ in _order(fmt)))
    df = records.withColumn("_cut", cut)
    fields = {}
    for i, (_, name) in enumerate(_order(fmt), start=1):
        value = F.substring_index("_cut", "\n", -1) if name == "body" else \
            F.substring_index(F.substring_index("_cut", "\n", i + 1), "\n", -1)
        fields[name] = F.when(F.col("_cut").startswith("\n"), F.nullif(value, F.lit("")))
    none = F.lit(None).cast("string")
    df = df.select("*", *[fields.get(n, none).alias(f"_{n}") for n in
                          ("ts", "body", "level", "alt_level", "thread", "alt_logger", "logger")])
    if fmt is log4j.KAFKA:
        df = df.withColumn("_first_logger", _trailing_logger(F.col("_body")))
        first_logger = F.col("_first_logger")
        last_logger = _trailing_logger(F.substring_index("text", "\n", -1))
        logger = F.coalesce("_alt_logger", first_logger, F.when(rest.isNotNull(), last_logger))
        in_first = F.col("_alt_logger").isNotNull() | first_logger.isNotNull()
        message = F.when(in_first, F.when(first_logger.isNull(), F.col("_body")).otherwise(
            F.col("_body").substr(F.lit(1), F.length("_body") - F.length(first_logger) - 3)))
        multi = F.concat_ws("\n", "_body", rest)
        message = F.coalesce(message, F.when(last_logger.isNotNull(),
                                             F.regexp_replace(multi, r"\n?" + TRAILING_LOGGER, "")), multi)
        detail, level = F.when(in_first, rest), F.coalesce("_alt_level", "_level")
    else:
        logger, message = F.col("_logger"), F.concat_ws("\n", "_body", rest)
        detail, level = F.lit(None).cast("string"), F.col("_level")
    return df.select(*records.columns, _local_to_utc(F.col("_ts"), timezone).alias("ts"), level.alias("level"),
                     logger.alias("logger"), F.col("_thread").alias("thread"), message.alias("message"),
                     detail.alias("detail"))


# ---- inputs ------------------------------------------------------------------------------------

def _corpus_records(fmt) -> list[str]:
    """Every record of the golden files and samples of `fmt`, assembled as silver assembles them."""
    start = __import__("re").compile(fmt.start)
    out = []
    paths = [p for p in (FIXTURES / "golden" / fmt.name).iterdir() if not p.name.endswith((".json", ".md"))]
    if fmt is log4j.KAFKA:
        paths += [p for p in (FIXTURES / "samples").iterdir() if "kafka" in p.name and ".prom" not in p.name]
    for path in sorted(paths):
        record = None
        for line in path.read_bytes().decode("utf-8", "replace").split("\n"):
            if start.match(line):
                if record is not None:
                    out.append(record)
                record = line
            elif record is not None:
                record += "\n" + line
        if record is not None:
            out.append(record)
    return out


TS = "2026-11-20 10:15:30,250"
KAFKA_SHAPES = [
    f"[{TS}] INFO [KafkaServer id=1] started (kafka.server.KafkaServer)",
    f"[{TS}] INFO started (kafka.server.KafkaServer)\r",
    f"[{TS}] INFO started (kafka.server.KafkaServer)\u0085",
    f"[{TS}] INFO started\r (kafka.server.KafkaServer)",
    f"[{TS}] INFO a\u2028b (kafka.Foo)",
    f"[{TS}] INFO a (kafka.Foo)\u2029",
    f"[{TS}] INFO  two spaces (k.F)",
    f"[{TS}] INFO ",
    f"[{TS}] INFO",
    f"[{TS}] INFO (k.F)",
    f"[{TS}] INFO  (k.F)",
    f"[{TS}] INFO x (k.F) (k.G)",
    f"[{TS}] INFO x (k F)",
    f"[{TS}] INFO x (k.F)y",
    f"[{TS}] INFO x ()",
    f"[{TS}] info lower (k.F)",
    f"[{TS}] INFO KafkaConfig values:\n\tbroker.id = 1\n\tzookeeper.connect = zk:2181\n (kafka.server.KafkaConfig)",
    f"[{TS}] INFO KafkaConfig values:\n\tbroker.id = 1 (kafka.server.KafkaConfig)",
    f"[{TS}] INFO KafkaConfig values:\n (kafka.server.KafkaConfig)\r",
    f"[{TS}] ERROR failed (kafka.server.ReplicaFetcherThread)\njava.io.IOException: x\n\tat a.b(C.java:1)",
    f"[{TS}] ERROR failed\njava.io.IOException: x (y)\n\tat a.b(C.java:1)",
    f"[{TS}] ERROR failed\n",
    f"[{TS}] ERROR failed (k.F)\n",
    f"[{TS}] ERROR failed\n\n",
    f"[{TS}] [INFO ] [main] [kafka.server.KafkaServer] - started",
    f"[{TS}] [INFO] [] [] - started (k.F)",
    f"[{TS}] [WARN   ] [thr\readed] [k.L] - body\nmore",
    f"[{TS}] [INFO ] [main] [kafka.server.KafkaServer] -started",
    f"[{TS}] [INFO ] [main] [k] - ",
    f"[{TS}] [INFO ] [main [k] - x",
    f"[{TS}] [INF0] [main] [k] - x",
    f"[{TS}] [] [main] [k] - x",
    f"[{TS}] [INFO ] [main] [k] - body\u0085more",
    f"[{TS}] INFO é ünïcödé 日本 (k.F)",
    f"[{TS}] INFO \ufffd broken (k.F)",
    f"[{TS}] INFO x (kafka.log$Cleaner-1.a_b)",
    "[2026-02-30 10:15:30,250] INFO impossible date (k.F)",
    "[2026-11-20 10:15:60,250] INFO second 60 (k.F)",
    "[2026-11-20 10:15:30.250] INFO a dot (k.F)",
    "[2026-11-20 10:15:30,250]INFO no space (k.F)",
    "not a header (k.F)\nsecond (k.G)",
    "not a header\nsecond line",
    "",
    "\n",
    "\n (k.F)",
]
ZK_SHAPES = [
    f"{TS} [myid:1] - INFO  [main:QuorumPeer@123] - LOOKING",
    f"{TS} - INFO  [main:QuorumPeer@123] - LOOKING",
    f"{TS} [myid:] - WARN  [QuorumPeer[myid=1]/0.0.0.0:2181:Follower@89] - Exception",
    f"{TS} [myid:1] - INFO  [NIOServerCxn.Factory:0.0.0.0/0.0.0.0:2181:NIOServerCnxn@1008] - Closed",
    f"{TS} [myid:1] - INFO  [a:b:C@x] - y:D@1] - z",
    f"{TS} [myid:1] - INFO  [a:b@1] - \r",
    f"{TS} [myid:1] - INFO  [a:b@1] - x\ry",
    f"{TS} [myid:1] - INFO  [a\r:b@1] - x",
    f"{TS} [myid:1] - INFO  [a:b@1] - x\u2028",
    f"{TS} [myid:1] - INFO  [:b@1] - empty thread",
    f"{TS} [myid:1] - INFO  [a:@1] - no class",
    f"{TS} [myid:1] - INFO  [a:b@] - no line",
    f"{TS} [myid:x] - INFO  [a:b@1] - bad myid",
    f"{TS} [myid:1] - INFO[a:b@1] - no space",
    f"{TS} [myid:1] - INFO  [a:b$c.d@1] - x\n\tat a.b(C.java:1)\n",
    f"{TS} [myid:1] -  INFO  [a:b@1] - two spaces",
    "2026-13-20 10:15:30,250 - INFO  [a:b@1] - month 13",
    "not a header\nsecond",
    "",
]


def _random_records(pieces: list[str], n: int, seed: int) -> list[str]:
    """Records spliced from the shapes: a head of one, a tail of another, lines of a third."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        a, b, c = (rng.choice(pieces) for _ in range(3))
        cut_a, cut_b = rng.randint(0, len(a)), rng.randint(0, len(b))
        text = a[:cut_a] + b[cut_b:]
        if rng.random() < 0.4:
            text += "\n" + "\n".join(rng.choice(pieces).split("\n")[-1] for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.2:
            text += rng.choice(["\r", "\u0085", " (k.Z)", "\n", " (", ")"])
        out.append(text)
    return out


ZONES = ["UTC", "America/New_York", "Europe/Berlin", "Asia/Kathmandu"]


@pytest.mark.parametrize("fmt", [log4j.KAFKA, log4j.ZOOKEEPER], ids=lambda f: f.name)
def test_engine_parser_equals_the_sql_form(spark, fmt):
    shapes = KAFKA_SHAPES if fmt is log4j.KAFKA else ZK_SHAPES
    corpus = _corpus_records(fmt)
    texts = corpus + shapes + _random_records(shapes + corpus[:200], 3000, seed=7) + [None]
    rows = [(i, t, ZONES[i % len(ZONES)]) for i, t in enumerate(texts)]
    df = local_frame(spark, rows, "i int, text string, zone string").repartition(3)
    ours = log4j.parse_records(df, fmt, F.col("zone"))
    theirs = oracle(df, fmt, F.col("zone"))
    assert ours.columns == theirs.columns
    # records the format's header does not take but another known layout's does (a random splice
    # `TS INFO ...`) are the other layouts' (tests/test_silver_layouts.py): left out here
    other = ours.where(F.col("level").isNotNull()).select("i").exceptAll(theirs.where(F.col("level").isNotNull()).select("i"))
    assert other.where(F.col("i") < len(corpus) + len(shapes)).count() == 0
    ours, theirs = ours.join(other, "i", "left_anti"), theirs.join(other, "i", "left_anti")
    diff = ours.exceptAll(theirs).union(theirs.exceptAll(ours)).orderBy("i").limit(5).collect()
    assert diff == []
    # the corpus is parsed, not only equally unparsed
    parsed = ours.where(F.col("i") < len(corpus))
    assert parsed.where(F.col("level").isNull() | F.col("ts").isNull()).count() == 0
    assert len(corpus) > (300 if fmt is log4j.KAFKA else 20)


def test_engine_parser_plan_has_no_python(spark):
    df = local_frame(spark, [("x",)], "text string")
    plan = log4j.parse_records(df, log4j.KAFKA, F.lit("UTC"))._jdf.queryExecution().executedPlan().toString()
    assert "io.fleethealth.engine.Log4jRecords" in plan and "Python" not in plan


@pytest.mark.parametrize("fmt", [log4j.KAFKA, log4j.ZOOKEEPER], ids=lambda f: f.name)
def test_engine_start_test_equals_the_start_regex(spark, fmt):
    shapes = KAFKA_SHAPES + ZK_SHAPES
    lines = {line for text in _corpus_records(fmt) + shapes for line in text.split("\n")}
    lines |= {line[:k] for line in shapes for k in range(0, 30)} | {"[" + line for line in ZK_SHAPES}
    lines |= {f"{TS[:19]} INFO  [main] LogCleaner:1 - x", f"{TS[:19]} info x", f"{TS[:19]} ", f"{TS[:19]}  INFO",
              f"{TS[:19]}", f"{TS[:19]}Z INFO x", f"{TS} INFO x (k.F) [main]"}
    df = local_frame(spark, [(x,) for x in lines], "line string")
    got = df.select("line", F.call_function(f"fleethealth.engine.{fmt.name}_start", F.col("line")).alias("s"))
    want = df.select("line", F.col("line").rlike(fmt.start).alias("s"))
    assert got.exceptAll(want).count() == 0 and want.exceptAll(got).count() == 0
    assert got.where("s").count() > 20 and got.where("NOT s").count() > 20
    nothing = local_frame(spark, [(None,)], "line string")
    assert nothing.select(F.call_function(f"fleethealth.engine.{fmt.name}_start", F.col("line"))).first()[0] is False
