#!/usr/bin/env bash
# fleethealth benchmarks (SPEC §8). `make bench` runs this with scripts/env.sh sourced;
# extra arguments (make bench ARGS="--brokers 2") go to bench/parse_throughput.py.
#
#   bash bench/run.sh                      defaults: 5 brokers x 20 MB x 1 hour, best of 3 (~4 min on 2 cores)
#   bash bench/run.sh --brokers 2          smaller
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
exec "$python" bench/parse_throughput.py "$@"
