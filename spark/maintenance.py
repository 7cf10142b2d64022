"""spark-submit entry point: OPTIMIZE and VACUUM every lakehouse table, prune the Data Docs alike."""
import argparse
import sys

from fleethealth.lake import maintenance
from fleethealth.pipeline import submit
from fleethealth.quality import docs
from fleethealth.runtime.session import build_session


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--lakehouse", default=None, help="the lakehouse folder (default $FLEETHEALTH_LAKEHOUSE)")
    p.add_argument("--retain-hours", type=float, default=maintenance.DEFAULT_RETAIN_HOURS,
                   help="VACUUM keeps files needed by versions newer than this, the Data Docs the "
                        "results validated since (default: 7 days)")
    args = p.parse_args(argv)
    lakehouse = submit.lakehouse_of(p, args)
    spark = build_session("fleethealth-maintenance", lakehouse.warehouse, tables=lakehouse.tables)
    for m in maintenance.maintain(spark, lakehouse, args.retain_hours):
        print(f"{m.table}: {m.files_before} -> {m.files_after} files ({m.files_compacted} compacted)")
    print(f"Data Docs: {docs.prune_data_docs(lakehouse, args.retain_hours)} validation results "
          f"older than {args.retain_hours:g} h removed with their pages")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
