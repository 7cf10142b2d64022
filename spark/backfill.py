"""spark-submit entry point of the backfill DAG: the already pulled hours of a window [--from, --to) in
one Spark application, as `fleethealth backfill` runs them (windows of consecutive hours, each hour's
bronze, silver and gold gated and published). Exit 1 when an hour failed; the others are published.
Exit 2 and one line, before a session starts, for a window the DAG refuses too (submit.backfill_window:
more than a week, or ending after the current hour)."""
import sys

from fleethealth.pipeline import submit


def main(argv=None) -> int:
    p = submit.window_parser(__doc__)
    args = p.parse_args(argv)
    lakehouse = submit.lakehouse_of(p, args)
    try:    # the DAG's `window` task checked it: a run that skipped or outlived that check stops here
        args.hours = submit.backfill_window(args.start, args.end)
    except ValueError as exc:
        print(f"{p.prog}: {exc}", file=sys.stderr)
        return 2
    return submit.run_hours(args, lakehouse)


if __name__ == "__main__":
    sys.exit(main())
