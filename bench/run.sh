#!/usr/bin/env bash
# fleethealth benchmarks (docs/targets.md: issue 13's goals). `make bench` runs this with scripts/env.sh
# sourced; `make bench ARGS="fleet --brokers 10,30,100"` passes arguments.
#
#   bash bench/run.sh                        every goal (2-6) from one run, then their lines again as
#                                            a summary (~1.5 h on 2 cores; log: bench/last-run.log)
#   bash bench/run.sh parse [--brokers 2]    Kafka log parse vs Spark's scan, Python and DuckDB (goal 3)
#   bash bench/run.sh parse-file [--runs 2] `fleethealth parse` of a small file of each source (≤ 10 s)
#   bash bench/run.sh tiny [--hours 3]       the demo's fleet through the DAG, hour by hour (goal 4)
#   bash bench/run.sh fleet [--brokers 10,30,100] [--hours 48]
#                                            hours end to end, layer by layer (goals 2, 5, 6)
#   bash bench/run.sh backfill [--hours 3]   hours of a small fleet one by one vs as one window
#   bash bench/run.sh backfill-airflow [--hours 24]
#                                            the backfill DAG vs `fleethealth backfill` (issue 49)
#   bash bench/run.sh history [--days 365]   a gold hour after a year of history vs on an empty one (issue 45)
#   bash bench/run.sh query [--lakehouse DIR] `fleethealth query` on the demo's lakehouse: first and repeat
#                                            (≤ 3 s, ≤ 1 s; issue 32)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)"
project="$(cd "$here/.." && pwd -P)"
if [ -z "${FLEETHEALTH_PROJECT:-}" ]; then
    # shellcheck source=/dev/null
    . "$project/scripts/env.sh"
fi
python="$project/.venv/bin/python"
[ -x "$python" ] || { echo "bench: $python missing: run \`make setup\`" >&2; exit 1; }
cd "$project"
case "${1:-all}" in
    parse) shift; exec "$python" bench/parse_throughput.py "$@" ;;
    fleet) shift; exec "$python" bench/fleet_hour.py "$@" ;;
    tiny) shift; exec "$python" bench/tiny_hour.py "$@" ;;
    parse-file) shift; exec "$python" bench/parse_file.py "$@" ;;
    backfill) shift; exec "$python" bench/backfill.py "$@" ;;
    backfill-airflow) shift; exec "$python" bench/backfill_airflow.py "$@" ;;
    history) shift; exec "$python" bench/history.py "$@" ;;
    query) shift; exec "$python" bench/query_latency.py "$@" ;;
    all) [ $# -le 1 ] || { echo "bench: arguments go after \`parse\`, \`tiny\` or \`fleet\`" >&2; exit 2; }
         log=bench/last-run.log
         {
             # one failed bench is reported and the others still run
             "$python" bench/query_latency.py || echo "bench: query failed"              # ≤ 3 s, ≤ 1 s repeated
             "$python" bench/parse_throughput.py || echo "bench: parse failed"         # goal 3: 5 brokers, 100 MB
             "$python" bench/parse_file.py || echo "bench: parse-file failed"           # a small file ≤ 10 s
             "$python" bench/tiny_hour.py || echo "bench: tiny failed"                  # goal 4: the demo's 3 DAG hours
             "$python" bench/history.py || echo "bench: history failed"               # issue 45: a year of history
             "$python" bench/fleet_hour.py --brokers 10,30,100 --goals 2,6 || echo "bench: fleet failed"  # goals 2, 6
             # goal 5: growth with history is growth of the fixed cost, so 48 small hours (1 MB of logs,
             # 2 000 JMX samples per broker-hour) show it best and take the least time.
             "$python" bench/fleet_hour.py --brokers 10 --hours 48 --goals 5 \
                 --bytes-per-broker-hour 1000000 --jmx-samples-per-broker-hour 2000 || echo "bench: growth failed"
         } 2>&1 | tee "$log"
         echo
         echo "== goals of this run ($(date -u '+%Y-%m-%d %H:%M UTC'), log $log) =="
         grep -E '^(goal [0-9a-z]|bench: .* failed)' "$log" ;;
    *) exec "$python" bench/parse_throughput.py "$@" ;;   # options only: the parse bench, as before
esac
