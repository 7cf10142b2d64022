"""spark-submit entry point: published bronze.records of one hour -> silver tables, quarantine and
reconciliation, validated by the silver gate, then published."""
import sys

from fleethealth import jobs
from fleethealth.report import text as report
from fleethealth.runtime import jobargs


def main(argv=None) -> int:
    args = jobargs.parser(__doc__).parse_args(argv)

    def run(spark):
        rows, gate = jobs.run_silver(spark, args.hour, args.inventory, args.lakehouse)
        return report.reconciliation_text(rows), gate
    return jobargs.run_step("silver", args, run)


if __name__ == "__main__":
    sys.exit(main())
