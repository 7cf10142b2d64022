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


def object_name_parts(mbean: Column) -> tuple[Column, Column]:
    """(domain, key properties map) of an ObjectName string."""
    domain = F.substring_index(mbean, ":", 1)
    keys = F.regexp_extract(mbean, r"^[^:]*:(.*)$", 1)
    return domain, F.str_to_map(keys, F.lit(","), F.lit("="))


def parse(bronze: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(samples, quarantine) from bronze `jmx` records."""
    doc = F.when(F.ltrim("record").startswith("{"), F.concat(F.lit("["), "record", F.lit("]"))) \
           .otherwise(F.col("record"))
    docs = bronze.withColumn("responses", F.from_json(doc, RESPONSES)).persist(StorageLevel.MEMORY_AND_DISK)
    bad_docs = (docs.where(F.col("responses").isNull())
                .select(*LINEAGE, F.lit(1).alias("line_count"), "record",
                        F.lit("not a Jolokia JSON response").alias("reason")))
    ok_status = F.coalesce(F.col("r.status"), F.lit(0)) == 200
    # A failed MBean in a bulk read whose other MBeans gave samples stands for no bronze record
    # (the record is counted in silver); otherwise the record's first failure stands for it.
    n_ok = F.size(F.filter("responses", lambda r: F.coalesce(r["status"], F.lit(0)) == 200))
    first_failed = F.array_position(F.transform("responses", lambda r: F.coalesce(r["status"], F.lit(0)) == 200),
                                    False) - 1
    resp = (docs.where(F.col("responses").isNotNull())
            .select(*LINEAGE, "record", n_ok.alias("n_ok"), first_failed.alias("first_failed"),
                    F.posexplode("responses").alias("resp_index", "r")))
    stands_for = F.when((F.col("n_ok") == 0) & (F.col("resp_index") == F.col("first_failed")), 1).otherwise(0)
    failed = (resp.where(~ok_status)
              .select(*LINEAGE, stands_for.alias("line_count"), "record",
                      F.concat(F.lit("jolokia status "), F.coalesce(F.col("r.status").cast("string"), F.lit("missing")),
                               F.lit(" for "), F.coalesce("r.request.mbean", F.lit("?")), F.lit(": "),
                               F.coalesce("r.error_type", F.lit("")), F.lit(" "),
                               F.coalesce("r.error", F.lit(""))).alias("reason")))
    ok = resp.where(ok_status)
    pairs = ok.select(*LINEAGE, F.timestamp_seconds("r.timestamp").alias("ts"),
                      F.explode(_pairs(F.col("r.request.mbean"), _attribute_path(F.col("r.request")),
                                       F.col("r.value"))).alias("p"))
    # a composite value gives one sample per item (`Attribute.item`), anything else one sample;
    # one explode for both (a composite that is not valid JSON stays one sample, as text)
    value = F.col("p.value")
    items = F.from_json(value, _MAP)
    one = F.array(F.struct(F.col("p.attribute").alias("attribute"), value.alias("value")))
    leaves = F.when(F.ltrim(value).startswith("{") & items.isNotNull(), F.transform(
        F.map_entries(items), lambda e: F.struct(F.concat_ws(".", F.col("p.attribute"), e["key"]).alias("attribute"),
                                                 e["value"].alias("value")))).otherwise(one)
    longform = pairs.select(*LINEAGE, "ts", F.col("p.mbean").alias("mbean"), F.explode(leaves).alias("leaf")) \
                    .select(*LINEAGE, "ts", "mbean", "leaf.attribute", "leaf.value")
    domain, props = object_name_parts(F.col("mbean"))
    samples = longform.select(
        "cluster", "host", "ts", "mbean", domain.alias("domain"), props.alias("props"), "attribute",
        F.col("value").try_cast("double").alias("value"),
        F.when(F.col("value").try_cast("double").isNull(), F.col("value")).alias("value_text"),
        "source", "file", "line_number", "hour")
    return samples, bad_docs.unionByName(failed)
