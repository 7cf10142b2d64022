"""spark-submit entry point of the hourly DAG: one hour's bronze, silver and gold in one Spark
application, each layer computed, validated by its gate and published before the next one starts
(`--layers` runs some of them, in this order). A failed gate stops the run there: that layer and the
ones above it stay as they were published (exit 1)."""
import sys

from fleethealth import jobs
from fleethealth.lake import tables as lake
from fleethealth.report import text as report
from fleethealth.pipeline import submit


def main(argv=None) -> int:
    p = submit.parser(__doc__)
    p.add_argument("--thresholds", default=None, help="threshold overrides YAML")
    p.add_argument("--layers", default=",".join(lake.LAYERS), type=submit.layers,
                   help=f"comma-separated layers to run, of {','.join(lake.LAYERS)} (default: all)")
    args = p.parse_args(argv)
    lakehouse = submit.lakehouse_of(p, args)

    def bronze(spark):
        n, gate = jobs.run_bronze(spark, args.hour, lakehouse)
        return f"bronze {args.hour.isoformat()}: {n} records", gate

    def silver(spark):
        rows, gate = jobs.run_silver(spark, args.hour, args.inventory, lakehouse)
        return report.reconciliation_text(rows), gate

    def gold(spark):
        incidents, gate = jobs.run_gold(spark, args.hour, args.inventory, lakehouse, args.thresholds)
        return report.hour_incidents_text(args.hour, incidents), gate

    steps = {"bronze": bronze, "silver": silver, "gold": gold}
    return submit.run_steps(args, lakehouse, [(layer, steps[layer]) for layer in args.layers])


if __name__ == "__main__":
    sys.exit(main())
