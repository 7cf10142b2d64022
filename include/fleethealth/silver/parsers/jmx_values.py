"""What a JMX sample must be to enter silver, from a Jolokia read or a Prometheus scrape alike.

A sample whose value is ±Infinity, beyond a Java long, or beyond what its bean's unit allows
(fleethealth.fleet.mbeans.UNIT_RANGE: a node id or an epoch is a Java int), or whose time is outside
the read window of its hour (fleethealth.lake.hours.read_window), is set aside: a silver.quarantine
row with the reason, never a value gold cannot hold. NaN stays (Kafka's idle averages report it
before their first measurement); gold reads it as no value (gold.facts.core.jmx_read).
"""
from __future__ import annotations

from functools import reduce
from operator import and_

from pyspark.sql import Column
from pyspark.sql import functions as F

from fleethealth.fleet import mbeans
from fleethealth.lake.hours import HOUR, LIVE_WINDOW, NO_HOUR, READ_EARLY


def _range_beans() -> list[tuple[mbeans.MBean, tuple[int, int]]]:
    return [(b, mbeans.UNIT_RANGE[b.unit]) for b in mbeans.catalogue().values() if b.unit in mbeans.UNIT_RANGE]


# the times Spark's timestamps hold (years 1970 to 9999), in epoch seconds
LAST_SECOND = 253402300799


def in_read_window(ts_seconds: Column, hour: Column) -> Column:
    """Whether a time in epoch seconds (a long) is inside the read window of `hour` (a timestamp);
    for NO_HOUR (a file parsed outside any hour), whether it is a time at all."""
    start = F.unix_seconds(hour)
    window = ts_seconds.between(start - int(READ_EARLY.total_seconds()),
                                start + int((HOUR + LIVE_WINDOW).total_seconds()))
    return ts_seconds.between(0, LAST_SECOND) & (_no_hour(hour) | window)


def served_time(ts: Column, hour: Column) -> Column:
    """A sample's time as silver keeps it: a read taken after its hour's end (a live read, up to the
    live window after it) stands at the hour's end, the last state of the hour it serves; the file's
    name keeps when it was taken."""
    return F.when(_no_hour(hour), ts).otherwise(F.least(ts, hour + F.expr("INTERVAL 1 HOUR")))


def _no_hour(hour: Column) -> Column:
    return F.unix_seconds(hour) == int(NO_HOUR.timestamp())


def window_problem(ts_seconds: Column, hour: Column, what: str) -> Column:
    """The reason a time (epoch seconds) is refused, NULL when it is inside its hour's read window."""
    return F.when(ts_seconds.isNull() | ~in_read_window(ts_seconds, hour), F.concat(
        F.lit(f"{what} "), F.coalesce(ts_seconds.cast("string"), F.lit("missing")),
        F.lit(" (epoch seconds) is outside the read window of hour "),
        F.date_format(hour, "yyyy-MM-dd'T'HH:mm'Z'"), F.lit(f" (from {int(READ_EARLY.total_seconds() // 60)} min before "
                                                            f"it to {int(LIVE_WINDOW.total_seconds() // 60)} min after it)")))


def value_problem(value: Column, domain: Column, props: Column, attribute: Column) -> Column:
    """The reason a sample's value is set aside, NULL when it may enter silver. Columns: the value
    (double, NULL for a text value) and the bean's domain, key properties and attribute."""
    low, high = mbeans.JAVA_LONG
    reason = (F.when(F.isnan(value), None)
              .when(F.abs(value) == float("inf"), F.lit("value is infinite"))
              .when((value < float(low)) | (value >= float(high)), F.lit("value is beyond a Java long")))
    for bean, (lo, hi) in _range_beans():
        matches = reduce(and_, [domain == bean.domain, attribute == bean.attribute,
                                *[props[k] == v for k, v in bean.keys]])
        reason = reason.when(matches & ((value < lo) | (value > hi)),
                             F.lit(f"value is beyond a Java int ({bean.id}: unit {bean.unit})"))
    return F.when(value.isNotNull(), reason)


def set_aside_record(mbean: Column, attribute: Column, raw: Column) -> Column:
    """The quarantine row's `record` of a set-aside sample: its bean, attribute and value as read."""
    return F.concat(F.coalesce(mbean, F.lit("?")), F.lit(" "), F.coalesce(attribute, F.lit("?")), F.lit(" = "),
                    F.coalesce(raw, F.lit("")))


def repeats_a_key(mbean: Column) -> Column:
    """Whether an ObjectName string names a key property twice (`type=a,type=b`): no JMX server
    registers one, and its key properties cannot be a map."""
    keys = F.transform(F.split(F.regexp_extract(mbean, r"^[^:]*:(.*)$", 1), ","),
                       lambda kv: F.substring_index(kv, "=", 1))
    return F.size(F.array_distinct(keys)) < F.size(keys)
