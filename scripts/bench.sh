#!/usr/bin/env bash
# `make bench`: build the release binaries, then run bench/bench.py (Cairn side by side with
# AgentsView, and Cairn against the budgets of docs/PRODUCT §6). Writes bench/RESULTS.md.
#
#   scripts/bench.sh                      every step (an hour and a half on 2 busy cores)
#   scripts/bench.sh --only hook,skim     some steps; the others keep their last figures
#   BENCH_RUNS=3 BENCH_RUNS_LARGE=1 scripts/bench.sh   fewer runs
#
# The corpora, AgentsView's virtualenv and the kept archives live in bench/cache (git-ignored;
# CAIRN_BENCH_CACHE moves it). Needs PyPI once, for agentsview. Not part of `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p cairn-cli -p cairn-bench --bins
exec python3 bench/bench.py "$@"
