"""spark-submit entry point of the hourly DAG: one hour's bronze, silver and gold in one Spark
application, each layer computed, validated by its gate and published before the next one starts
(`--layers` runs some of them, in this order). A failed gate stops the run there: that layer and the
ones above it stay as they were published (exit 1)."""
import sys

from fleethealth.lake import tables as lake
from fleethealth.pipeline import submit


def main(argv=None) -> int:
    p = submit.parser(__doc__)
    p.add_argument("--thresholds", default=None, help="threshold overrides YAML")
    p.add_argument("--layers", default=",".join(lake.LAYERS), type=submit.layers,
                   help=f"comma-separated layers to run, of {','.join(lake.LAYERS)} (default: all)")
    args = p.parse_args(argv)
    return submit.run_hour(args, submit.lakehouse_of(p, args), args.layers)


if __name__ == "__main__":
    sys.exit(main())
