"""spark-submit entry point: published silver of one hour -> gold facts, findings and incidents,
validated by the gold gate (with the inventory's completeness check), then published."""
import sys

from fleethealth import jobs
from fleethealth.runtime import jobargs


def main(argv=None) -> int:
    p = jobargs.parser(__doc__)
    p.add_argument("--thresholds", default=None, help="threshold overrides YAML")
    args = p.parse_args(argv)

    def run(spark):
        n, report = jobs.run_gold(spark, args.hour, args.inventory, args.lakehouse, args.thresholds)
        return f"gold {args.hour.isoformat()}: {n} findings", report
    return jobargs.run_step("gold", args, run)


if __name__ == "__main__":
    sys.exit(main())
