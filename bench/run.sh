#!/usr/bin/env bash
# fleethealth benchmarks (SPEC §8, issue 13's goals). `make bench` runs this with scripts/env.sh
# sourced; `make bench ARGS="fleet --brokers 10,30,100"` passes arguments.
#
#   bash bench/run.sh                        both, with their defaults (~10 min on 2 cores)
#   bash bench/run.sh parse [--brokers 2]    Kafka log parse vs Spark's scan and Python (goal 3)
#   bash bench/run.sh fleet [--brokers 10,30,100] [--hours 48]
#                                            hours end to end, layer by layer (goals 2, 5, 6)
#   bash bench/run.sh backfill [--hours 3]   hours of a small fleet one by one vs as one window
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
    backfill) shift; exec "$python" bench/backfill.py "$@" ;;
    all) [ $# -le 1 ] || { echo "bench: arguments go after \`parse\` or \`fleet\`" >&2; exit 2; }
         "$python" bench/parse_throughput.py
         exec "$python" bench/fleet_hour.py ;;
    *) exec "$python" bench/parse_throughput.py "$@" ;;   # options only: the parse bench, as before
esac
