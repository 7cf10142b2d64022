"""spark-submit entry point: landing files of one hour -> staged bronze.records (validate_bronze publishes)."""
import sys

from fleethealth import jobargs, jobs
from fleethealth.session import build_session


def main(argv=None) -> int:
    args = jobargs.parser(__doc__, needs_inventory=False).parse_args(argv)
    spark = build_session("fleethealth-bronze", args.lakehouse)
    n = jobs.run_bronze(spark, args.hour, args.lakehouse)
    print(f"bronze {args.hour.isoformat()}: {n} records staged")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
