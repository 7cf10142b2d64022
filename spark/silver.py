"""spark-submit entry point: published bronze.records of one hour -> staged silver tables, quarantine,
reconciliation (validate_silver publishes)."""
import sys

from fleethealth import jobargs, jobs, report
from fleethealth.session import build_session


def main(argv=None) -> int:
    args = jobargs.parser(__doc__).parse_args(argv)
    spark = build_session("fleethealth-silver", args.lakehouse)
    rows = jobs.run_silver(spark, args.hour, args.inventory, args.lakehouse)
    print(report.reconciliation_text(rows))
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
