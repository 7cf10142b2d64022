"""Jolokia read responses (single, bulk, MBean patterns; with or without attribute) -> JMX samples.

Canonical form: MBean ObjectName (domain + key properties) + attribute -> value. Composite
values (e.g. HeapMemoryUsage) are flattened one level as `Attribute.key`, whether the whole MBean,
the attribute or an inner `path` was read (`attribute: HeapMemoryUsage, path: used` gives
`HeapMemoryUsage.used`, as reading the attribute whole does). A response whose status is not 200
goes to quarantine with Jolokia's error. Same shapes in Jolokia 1.x and 2.x.
"""
from __future__ import annotations

from pyspark import StorageLevel
from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.window import Window

from fleethealth.silver.parsers import jmx_values

RESPONSES = ("array<struct<request:struct<mbean:string,attribute:string,path:string,type:string>,"
             "value:string,timestamp:bigint,status:int,error:string,error_type:string>>")
_MAP = "map<string,string>"
LINEAGE = ["cluster", "host", "source", "file", "file_sha256", "line_number", "hour"]


def _pairs(mbean: Column, attribute: Column, value: Column) -> Column:
    """array<struct<mbean, attribute, value>> of one response's value."""
    is_pattern = mbean.rlike(r"[*?]")
    is_object = F.ltrim(value).startswith("{")
    # one attribute named (not a list of them): its value, scalar or composite, belongs to it
    single = attribute.isNotNull() & ~attribute.startswith("[")
    by_attr = F.transform(F.map_entries(F.from_json(value, _MAP)),
                          lambda a: F.struct(mbean.alias("mbean"), a["key"].alias("attribute"),
                                             a["value"].alias("value")))
    by_bean = F.flatten(F.transform(
        F.map_entries(F.from_json(value, _MAP)),
        lambda b: F.transform(F.map_entries(F.from_json(b["value"], _MAP)),
                              lambda a: F.struct(b["key"].alias("mbean"), a["key"].alias("attribute"),
                                                 a["value"].alias("value")))))
    one = F.array(F.struct(mbean.alias("mbean"), attribute.alias("attribute"), value.alias("value")))
    return F.when(is_pattern & is_object, by_bean).when(single, one).otherwise(by_attr)


def _attribute_path(request: Column) -> Column:
    """The request's attribute, with its inner path (`a/b` -> `Attribute.a.b`) if one was read."""
    path = F.translate(request["path"], "/", ".")
    return F.when(request["path"].isNotNull() & request["attribute"].isNotNull(),
                  F.concat_ws(".", request["attribute"], path)).otherwise(request["attribute"])


def object_name_parts(mbean: Column, repeats: Column | None = None) -> tuple[Column, Column]:
    """(domain, key properties map) of an ObjectName string; the map is NULL where `repeats` (the
    name repeats a key: jmx_values.repeats_a_key, which a map cannot hold)."""
    domain = F.substring_index(mbean, ":", 1)
    keys = F.regexp_extract(mbean, r"^[^:]*:(.*)$", 1)
    props = F.str_to_map(keys, F.lit(","), F.lit("="))
    return domain, props if repeats is None else F.when(~repeats, props)


def _answer_ok(r: Column) -> Column:
    """Whether a response may give samples: status 200 and a time inside its hour's read window."""
    return (F.coalesce(r["status"], F.lit(0)) == 200) & F.coalesce(
        jmx_values.in_read_window(r["timestamp"], F.col("hour")), F.lit(False))


def _answer_problem(r: Column) -> Column:
    status = F.coalesce(r["status"], F.lit(0))
    return F.when(status != 200, F.concat(
        F.lit("jolokia status "), F.coalesce(r["status"].cast("string"), F.lit("missing")), F.lit(" for "),
        F.coalesce(r["request"]["mbean"], F.lit("?")), F.lit(": "), F.coalesce(r["error_type"], F.lit("")),
        F.lit(" "), F.coalesce(r["error"], F.lit("")))) \
        .otherwise(F.concat(F.lit("jolokia answer for "), F.coalesce(r["request"]["mbean"], F.lit("?")), F.lit(": "),
                            jmx_values.window_problem(r["timestamp"], F.col("hour"), "its time")))


RECORD = ["file", "line_number"]


def parse(bronze: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(samples, quarantine) from bronze `jmx` records."""
    doc = F.when(F.ltrim("record").startswith("{"), F.concat(F.lit("["), "record", F.lit("]"))) \
           .otherwise(F.col("record"))
    docs = bronze.withColumn("responses", F.from_json(doc, RESPONSES)).persist(StorageLevel.MEMORY_AND_DISK)
    bad_docs = (docs.where(F.col("responses").isNull() | (F.size("responses") == 0))
                .select(*LINEAGE, F.lit(1).alias("line_count"), "record",
                        F.when(F.col("responses").isNull(), F.lit("not a Jolokia JSON response"))
                         .otherwise(F.lit("a Jolokia bulk answer without responses")).alias("reason")))
    # A refused answer in a bulk read whose other answers gave samples stands for no bronze record
    # (the record is counted in silver); otherwise the record's first refused answer stands for it.
    n_ok = F.size(F.filter("responses", _answer_ok))
    first_failed = F.array_position(F.transform("responses", _answer_ok), False) - 1
    resp = (docs.where(F.col("responses").isNotNull())
            .select(*LINEAGE, "record", n_ok.alias("n_ok"), first_failed.alias("first_failed"),
                    F.posexplode("responses").alias("resp_index", "r")))
    stands_for = F.when((F.col("n_ok") == 0) & (F.col("resp_index") == F.col("first_failed")), 1).otherwise(0)
    failed = (resp.where(~_answer_ok(F.col("r")))
              .select(*LINEAGE, stands_for.alias("line_count"), "record", _answer_problem(F.col("r")).alias("reason")))
    ok = resp.where(_answer_ok(F.col("r")))
    pairs = ok.select(*LINEAGE, jmx_values.served_time(F.timestamp_seconds("r.timestamp"), F.col("hour")).alias("ts"),
                      F.explode(_pairs(F.col("r.request.mbean"), _attribute_path(F.col("r.request")),
                                       F.col("r.value"))).alias("p"))
    pairs = pairs.withColumn("repeats", jmx_values.repeats_a_key(F.col("p.mbean")))
    # a composite value gives one sample per item (`Attribute.item`), anything else one sample;
    # one explode for both (a composite that is not valid JSON stays one sample, as text)
    value = F.col("p.value")
    items = F.from_json(value, _MAP)
    one = F.array(F.struct(F.col("p.attribute").alias("attribute"), value.alias("value")))
    leaves = F.when(F.ltrim(value).startswith("{") & items.isNotNull(), F.transform(
        F.map_entries(items), lambda e: F.struct(F.concat_ws(".", F.col("p.attribute"), e["key"]).alias("attribute"),
                                                 e["value"].alias("value")))).otherwise(one)
    longform = pairs.select(*LINEAGE, "ts", F.col("p.mbean").alias("mbean"), "repeats", F.explode(leaves).alias("leaf")) \
                    .select(*LINEAGE, "ts", "mbean", "repeats", "leaf.attribute", "leaf.value")
    domain, props = object_name_parts(F.col("mbean"), F.col("repeats"))
    number = F.col("value").try_cast("double")
    checked = longform.select(
        *LINEAGE, "ts", "mbean", domain.alias("domain"), props.alias("props"), "attribute",
        number.alias("number"), F.col("value").alias("raw"),
        F.when(F.col("repeats"), F.lit("the MBean name repeats a key property"))
         .otherwise(jmx_values.value_problem(number, domain, props, F.col("attribute"))).alias("problem"))
    samples = checked.where(F.col("problem").isNull()).select(
        "cluster", "host", "ts", "mbean", "domain", "props", "attribute", F.col("number").alias("value"),
        F.when(F.col("number").isNull(), F.col("raw")).alias("value_text"), "source", "file", "line_number", "hour")
    answered = resp.where(F.col("n_ok") > 0).select(*LINEAGE, "record").dropDuplicates(RECORD)
    return samples, bad_docs.unionByName(failed).unionByName(_set_aside(checked, answered))


def _set_aside(checked: DataFrame, answered: DataFrame) -> DataFrame:
    """A quarantine row per set-aside sample, and one per record whose answers gave no sample at all
    (`answered`: the records with an answer that gave samples or none). The first set-aside sample of a
    record none of whose samples entered silver stands for it; its other rows, and those of a record
    in silver, for no bronze record."""
    per_record = checked.groupBy(*RECORD).agg(F.count(F.when(F.col("problem").isNull(), 1)).alias("kept"))
    bad = checked.where(F.col("problem").isNotNull())
    first = F.row_number().over(Window.partitionBy(*RECORD).orderBy("mbean", "attribute", "raw")) == 1
    set_aside = (bad.join(per_record, RECORD)
                 .select(*LINEAGE, F.when((F.col("kept") == 0) & first, 1).otherwise(0).alias("line_count"),
                         jmx_values.set_aside_record(F.col("mbean"), F.col("attribute"), F.col("raw")).alias("record"),
                         F.concat(F.lit("jmx sample set aside: "), F.col("problem")).alias("reason")))
    empty = (answered.join(per_record, RECORD, "left_anti")
             .select(*LINEAGE, F.lit(1).alias("line_count"), "record",
                     F.lit("a Jolokia answer without samples (an empty value)").alias("reason")))
    return set_aside.unionByName(empty)
