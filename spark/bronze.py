"""spark-submit entry point: landing files of one hour -> bronze.records and bronze.files,
validated by the bronze gate, then published."""
import sys

from fleethealth import jobs
from fleethealth.runtime import jobargs


def main(argv=None) -> int:
    args = jobargs.parser(__doc__, needs_inventory=False).parse_args(argv)

    def run(spark):
        n, report = jobs.run_bronze(spark, args.hour, args.lakehouse)
        return f"bronze {args.hour.isoformat()}: {n} records", report
    return jobargs.run_step("bronze", args, run)


if __name__ == "__main__":
    sys.exit(main())
