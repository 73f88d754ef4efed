#!/usr/bin/env bash
# Cold sync of the same corpus by `cairn sync` and `agentsview sync`, alternating runs,
# reporting medians of wall time and peak RSS. Reproducible: the corpus is built from the
# repository's fixtures with a fixed seed (bench/make_corpus.py).
#
#   bench/sync-vs-agentsview.sh [--size MB] [--runs N]
#
# Needs network access to PyPI once (agentsview is installed into a private virtualenv under
# the cache dir). Writes bench/RESULTS-sync.md.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZE=100
RUNS=5
AGENTSVIEW_VERSION=0.46.1
while [ $# -gt 0 ]; do
  case "$1" in
    --size) SIZE="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done

CACHE="${CAIRN_BENCH_CACHE:-$PWD/bench/cache}"
CORPUS="$CACHE/corpus-${SIZE}mb"
VENV="$CACHE/agentsview-venv"
mkdir -p "$CACHE"

cargo build --release --locked -p cairn-cli
CAIRN="$PWD/${CARGO_TARGET_DIR:-target}/release/cairn"
[ -x "$CAIRN" ] || CAIRN="${CARGO_TARGET_DIR:-$PWD/target}/release/cairn"

if [ ! -f "$CORPUS/.done" ]; then
  python3 bench/make_corpus.py --size "$SIZE" --out "$CORPUS"
  touch "$CORPUS/.done"
fi
if [ ! -x "$VENV/bin/agentsview" ]; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet "agentsview==$AGENTSVIEW_VERSION"
fi
# The PyPI package is a thin Python launcher that execs this Go binary; time the binary.
AV=$(ls "$VENV"/lib/python3*/site-packages/agentsview/bin/agentsview)
chmod +x "$AV"

python3 bench/run_sync.py --cairn "$CAIRN" --agentsview "$AV" --corpus "$CORPUS" --runs "$RUNS" \
  --out bench/RESULTS-sync.md
