"""The floor of any hour (issue 49): a spark-submit application that starts with the project's
Spark settings, writes a 10-row Delta table and reads it back. Nothing an hour does can cost less.

    spark-submit bench/floor_job.py <table folder>
"""
import sys

from fleethealth.runtime.session import build_session


def main(path: str) -> int:
    spark = build_session("fleethealth-floor", short_lived=True)
    try:
        spark.range(10).write.format("delta").mode("overwrite").save(path)
        rows = spark.read.format("delta").load(path).count()
        print(f"floor: {rows} rows written and read back")
        return 0 if rows == 10 else 1
    finally:
        spark.stop()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
