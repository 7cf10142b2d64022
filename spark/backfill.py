"""spark-submit entry point of the backfill DAG: the already pulled hours of a window [--from, --to) in
one Spark application, as `fleethealth backfill` runs them (windows of consecutive hours, each hour's
bronze, silver and gold gated and published). Exit 1 when an hour failed; the others are published."""
import sys

from fleethealth.lake.hours import parse_window
from fleethealth.pipeline import submit


def main(argv=None) -> int:
    p = submit.window_parser(__doc__)
    args = p.parse_args(argv)
    lakehouse = submit.lakehouse_of(p, args)
    try:
        args.hours = parse_window(args.start, args.end)
    except ValueError as exc:
        p.error(str(exc))
    return submit.run_hours(args, lakehouse)


if __name__ == "__main__":
    sys.exit(main())
