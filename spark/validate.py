"""spark-submit entry point: the quality gate of one layer and hour (write-audit-publish).

Validates the layer's staged tables with their GX suites, records the results in
gold.quality_results and the Data Docs, then publishes them; a failed critical expectation exits
non-zero naming it, and the published tables stay as they were.
"""
import sys

from fleethealth import jobargs, jobs, quality
from fleethealth.session import build_session


def main(argv=None) -> int:
    p = jobargs.parser(__doc__, needs_inventory=False)
    p.add_argument("--layer", required=True, choices=jobs.LAYERS)
    p.add_argument("--inventory", default=None, help="fleet inventory YAML (gold: completeness)")
    args = p.parse_args(argv)
    quality.preload()  # overlaps the GX import with the JVM start
    spark = build_session(f"fleethealth-validate-{args.layer}", args.lakehouse)
    docs = jobs.data_docs_dir(args.lakehouse)
    try:
        report = jobs.audit_publish(spark, args.layer, args.hour, args.lakehouse, args.inventory)
        print(report.summary())
        return 0
    except quality.QualityGateError as exc:
        print(f"validate_{args.layer} {args.hour.isoformat()}: nothing published\n{exc}", file=sys.stderr)
        return 1
    finally:
        if docs:
            print(f"Data Docs: {docs / 'index.html'}")
        spark.stop()


if __name__ == "__main__":
    sys.exit(main())
