#!/usr/bin/env bash
# Regenerates configs/data/stragglers-example.csv, the bundled trace with persistent and correlated
# stragglers (docs/stragglers.md), from the stated model in configs/stragglers-example.toml:
#
#   scripts/make-stragglers-example.sh [PACER]      (PACER: the pacer binary, default build/pacer)
#
#   1. pacer run simulates 500 DGD steps on 16 workers under timing.model =
#      "persistent_stragglers" (workers 3 and 11 on one slow host, shocks, hiccups, jitter) and
#      records every job in jobs.csv (tag = step);
#   2. pacer stragglers reads the run folder and writes the trace it analysed,
#      worker,duration,step,units (duration in seconds per work unit, step = the job's tag);
#   3. that trace replaces configs/data/stragglers-example.csv.
# The simulator is deterministic: the same pacer gives the same file, byte for byte.
set -euo pipefail
cd "$(dirname "$0")/.."
pacer=${1:-build/pacer}
[ -x "$pacer" ] || { echo "make-stragglers-example.sh: $pacer: no pacer binary (build it first)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$pacer" -q run configs/stragglers-example.toml --out "$work/run" > /dev/null
"$pacer" -q stragglers "$work/run" --out "$work/report" > /dev/null
cp "$work/report/trace.csv" configs/data/stragglers-example.csv.tmp
mv configs/data/stragglers-example.csv.tmp configs/data/stragglers-example.csv
echo "wrote configs/data/stragglers-example.csv ($(($(wc -l < configs/data/stragglers-example.csv) - 1)) jobs)"
