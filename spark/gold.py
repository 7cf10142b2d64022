"""spark-submit entry point: published silver of one hour -> staged gold facts, findings, incidents
(validate_gold publishes)."""
import sys

from fleethealth import jobargs, jobs
from fleethealth.session import build_session


def main(argv=None) -> int:
    p = jobargs.parser(__doc__)
    p.add_argument("--thresholds", default=None, help="threshold overrides YAML")
    args = p.parse_args(argv)
    spark = build_session("fleethealth-gold", args.lakehouse)
    n = jobs.run_gold(spark, args.hour, args.inventory, args.lakehouse, args.thresholds)
    print(f"gold {args.hour.isoformat()}: {n} findings staged")
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
