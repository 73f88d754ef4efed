#!/usr/bin/env bash
# Desktop cold start and idle cost on a synced archive of about 2,000 sessions.
#
#   scripts/measure-startup.sh            # 5 runs; RUNS=9 for more; DROP_CACHES=0 for warm runs
#
# 1. Builds the release app and CLI (unless present), a corpus of real-shaped transcripts with
#    bench/make_corpus.py (the repository's fixtures copied with fresh session ids) and syncs
#    it once with `cairn sync`.
#    Corpus and archive are kept in $CAIRN_STARTUP_DIR (default target/startup-bench) and reused.
#    SIZE_MB=830 gives about 2,000 sessions.
# 2. Starts the app RUNS times under one Xvfb server. Each run measures wall-clock time from
#    just before exec to the moment the UI, having rendered the Branches page with its data,
#    calls the typed `app_ready` command (with CAIRN_STARTUP_TRACE set it prints the time).
#    The page cache is dropped before each run when that is allowed (root, not in a container).
# 3. Starts it once more and reads, 30 s after ready, the resident memory of the app and of the
#    WebKit processes it started, then the CPU they use over the next 20 s (idle CPU).
# Prints one line per run, the median, and the idle figures.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
work="${CAIRN_STARTUP_DIR:-$target_dir/startup-bench}"
runs="${RUNS:-5}"
size_mb="${SIZE_MB:-830}"
app="$target_dir/release/cairn-desktop"
cli="$target_dir/release/cairn"

say() { printf 'measure-startup: %s\n' "$*" >&2; }

if [ "${SKIP_BUILD:-}" != 1 ]; then
  say "building the release app and CLI (minutes the first time)"
  npx tauri build --no-bundle >&2
  cargo build --release --locked -p cairn-cli >&2
fi

corpus="$work/corpus-$size_mb"
data="$work/data-$size_mb"
mkdir -p "$work"
if [ ! -f "$corpus.done" ]; then
  say "writing a ${size_mb} MB corpus"
  python3 bench/make_corpus.py --size "$size_mb" --out "$corpus" >&2
  rm -rf "$data"
  touch "$corpus.done"
fi
export CLAUDE_PROJECTS_DIR="$corpus/claude" CODEX_SESSIONS_DIR="$corpus/codex"
export CAIRN_DATA_DIR="$data"
if [ ! -f "$data/cairn.db" ]; then
  say "syncing the corpus"
  "$cli" --data-dir "$data" sync >&2
fi
sessions=$("$cli" --data-dir "$data" --json sessions | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
say "archive: $sessions sessions in $data ($(du -sh "$data" | cut -f1))"

# One X server for every run.
display=":$((90 + RANDOM % 100))"
Xvfb "$display" -screen 0 1280x800x24 -nolisten tcp >/dev/null 2>&1 &
xvfb=$!
app_pid=""
cleanup() {
  [ -n "$app_pid" ] && kill "$app_pid" 2>/dev/null || true
  kill "$xvfb" 2>/dev/null || true
}
trap cleanup EXIT
export DISPLAY="$display"
for _ in $(seq 1 100); do xwininfo -root >/dev/null 2>&1 && break; sleep 0.05; done
# The WebKit cache and settings live in HOME: keep one for all runs, like a person's machine
# after the first launch.
export HOME="$work/home" XDG_CACHE_HOME="$work/home/.cache"
mkdir -p "$HOME"

now_ms() { date +%s%3N; }

# Start the app, wait for its ready line, print the milliseconds from exec to ready.
start_app() {
  local log="$work/run.log" attempt
  for attempt in 1 2 3; do
    : > "$log"
    local t0
    t0=$(now_ms)
    CAIRN_STARTUP_TRACE=1 "$app" 2> "$log" &
    app_pid=$!
    for _ in $(seq 1 300); do
      if grep -q 'ready at' "$log"; then
        local t1
        t1=$(grep -o 'ready at [0-9]*' "$log" | head -1 | grep -o '[0-9]*$')
        echo $((t1 - t0))
        # Where the time went: every milestone the shell and the UI reported, from exec.
        grep -o '[a-z ]* at [0-9]*' "$log" | while read -r line; do
          printf '%s +%d, ' "${line% at *}" $((${line##* } - t0))
        done > "$work/milestones"
        return 0
      fi
      # GTK occasionally fails to connect to a freshly restarted display: start again.
      kill -0 "$app_pid" 2>/dev/null || break
      sleep 0.02
    done
    say "attempt $attempt: the app did not become ready; its stderr:"
    grep -v '^ ' "$log" | head -5 >&2
    stop_app
    sleep 1
  done
  return 1
}

stop_app() {
  kill "$app_pid" 2>/dev/null || true
  wait "$app_pid" 2>/dev/null || true
  app_pid=""
}

drop_caches() {
  if [ "${DROP_CACHES:-1}" = 0 ]; then
    echo "page cache warm"
    return
  fi
  sync
  { echo 3 > /proc/sys/vm/drop_caches; } 2>/dev/null && echo "page cache dropped" || echo "page cache warm (cannot drop it here)"
}

times=()
for i in $(seq 1 "$runs"); do
  cache=$(drop_caches)
  # Not in $( ): start_app sets app_pid in this shell.
  start_app > "$work/ms"
  ms=$(cat "$work/ms")
  times+=("$ms")
  printf 'run %d: %d ms to an interactive window (%s)\n' "$i" "$ms" "$cache"
  printf '       %s\n' "$(sed 's/, $//' "$work/milestones")"
  sleep 1
  stop_app
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}')
echo "cold start, median of $runs: $median ms (budget 1000 ms)"

# The app and every process it started (WebKit's web and network processes).
tree() {
  local pids=("$1") i=0
  while [ $i -lt ${#pids[@]} ]; do
    local children
    children=$(ps -o pid= --ppid "${pids[$i]}" 2>/dev/null || true)
    for c in $children; do pids+=("$c"); done
    i=$((i + 1))
  done
  echo "${pids[@]}"
}
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
anon_kb() { awk '/^RssAnon/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
# Proportional share: shared libraries count once across the app and its WebKit processes.
pss_kb() { awk '/^Pss:/ {print $2}' "/proc/$1/smaps_rollup" 2>/dev/null || echo 0; }
# The archive's pages the core maps (SQLite mmap_size): file-backed, reclaimable, but in RSS.
db_kb() { awk '/cairn\.db$/ {found = 1; next} found && /^Rss:/ {sum += $2; found = 0} END {print sum + 0}' "/proc/$1/smaps" 2>/dev/null || echo 0; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }

start_app > "$work/ms"
say "waiting 30 s for the window to settle (it also catches up with a sync)"
sleep 30
pids=$(tree "$app_pid")
app_rss=$(rss_kb "$app_pid")
app_anon=$(anon_kb "$app_pid")
app_db=$(db_kb "$app_pid")
total_rss=0
total_pss=0
for p in $pids; do
  total_rss=$((total_rss + $(rss_kb "$p")))
  total_pss=$((total_pss + $(pss_kb "$p")))
done
before=0
for p in $pids; do before=$((before + $(cpu_ticks "$p"))); done
sleep 20
after=0
for p in $pids; do after=$((after + $(cpu_ticks "$p"))); done
hz=$(getconf CLK_TCK)
cpu=$(awk -v t=$((after - before)) -v hz="$hz" 'BEGIN {printf "%.2f", 100 * t / hz / 20}')
echo "idle RSS after 30 s: app $((app_rss / 1024)) MB (budget 150 MB), of which $((app_anon / 1024)) MB anonymous and $((app_db / 1024)) MB archive pages mapped by SQLite"
echo "  app + WebKit processes: RSS $((total_rss / 1024)) MB, proportional (PSS) $((total_pss / 1024)) MB"
echo "idle CPU over the next 20 s: ${cpu}% of one core (app + WebKit processes)"
stop_app
