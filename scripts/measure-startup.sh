#!/usr/bin/env bash
# Desktop cold start and idle cost on a synced archive of about 2,000 sessions.
#
#   scripts/measure-startup.sh     # 5 cold + 5 warm runs; RUNS=9 for more; MODES=warm; SETTLE=0 (no memory)
#
# 1. Builds the release app, CLI and generator (unless SKIP_BUILD=1), a corpus of SESSIONS (2,000)
#    real-shaped transcripts of SIZE_MB (1,000) in all with `cairn-bench corpus` from SEED (7) —
#    the spec of `make bench`'s 1gb corpus, so the same seed gives the same bytes — and syncs it
#    once with `cairn sync`. Corpus and archive are kept in $CAIRN_STARTUP_DIR (default
#    target/startup-bench) and reused while the spec is unchanged.
# 2. Starts the app under one Xvfb server, RUNS times cold (the files a start reads evicted from
#    the page cache first) and RUNS times warm (MODES="cold warm" by default), and times each start
#    from just before exec to "interactive": the UI has rendered the Branches page with its list
#    read from the archive (the key handler that moves in it is attached at mount, before), one
#    animation frame has gone by so that page is painted, and it has then called the typed
#    `app_ready` command, whose arrival the app prints (CAIRN_STARTUP_TRACE=1) with every
#    milestone of the start.
# 3. In each warm run, SETTLE s (30) after ready, reads the resident memory of cairn-desktop (the
#    budget applies to it) and, separately, of the WebKit web and network processes it started.
#    Then one more start measures the CPU they all use over 20 s (idle CPU).
# Prints one line per run and the medians.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-$PWD/target}"
work="${CAIRN_STARTUP_DIR:-$target_dir/startup-bench}"
runs="${RUNS:-5}"
size_mb="${SIZE_MB:-1000}"
sessions_wanted="${SESSIONS:-2000}"
related="${RELATED:-500}"
seed="${SEED:-7}"
app="$target_dir/release/cairn-desktop"
cli="${CAIRN_CLI:-$target_dir/release/cairn}"
gen="${CAIRN_BENCH:-$target_dir/release/cairn-bench}"

say() { printf 'measure-startup: %s\n' "$*" >&2; }

if [ "${SKIP_BUILD:-}" != 1 ]; then
  say "building the release app and CLI (minutes the first time)"
  npx tauri build --no-bundle >&2
  cargo build --release --locked -p cairn-cli -p cairn-bench >&2
fi

spec="s${sessions_wanted}-mb${size_mb}-r${related}-seed${seed}"
corpus="$work/corpus-$spec"
data="$work/data-$spec"
mkdir -p "$work"
if [ ! -f "$corpus.done" ]; then
  say "generating the corpus: $sessions_wanted sessions, $size_mb MB, seed $seed"
  rm -rf "$corpus" "$data"
  "$gen" corpus --out "$corpus" --mb "$size_mb" --sessions "$sessions_wanted" \
    --related "$related" --seed "$seed" > "$corpus.json"
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
      if grep -q 'cannot open the archive' "$log"; then
        # An archive this build cannot read (say, synced by a newer CAIRN_CLI) shows an error page.
        say "$(grep 'cannot open the archive' "$log")"
        stop_app
        return 1
      fi
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

# A cold start: the files a start reads are evicted from the page cache first (the archive, the
# app, WebKit, GTK and Mesa's libraries), with posix_fadvise, so other work on a shared machine
# keeps its cache. A warm start: everything is cached, as on a second launch.
cold_files() {
  find "$data" "$app" -type f 2>/dev/null
  ls -d /usr/lib/*-linux-gnu/libwebkit2gtk-4.1.so* /usr/lib/*-linux-gnu/libjavascriptcoregtk-4.1.so* \
    /usr/lib/*-linux-gnu/webkit2gtk-4.1/* /usr/lib/*-linux-gnu/libgtk-3.so* /usr/lib/*-linux-gnu/libgdk-3.so* \
    /usr/lib/*-linux-gnu/libLLVM*.so* /usr/lib/*-linux-gnu/libgallium* /usr/lib/*-linux-gnu/dri/* \
    /usr/lib/*-linux-gnu/libicu*.so* 2>/dev/null || true
}
evict() {
  cold_files | python3 -c '
import os, sys
for path in sys.stdin.read().split("\n"):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        continue
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
'
}

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
# Resident pages of the mappings whose file matches a pattern: the archive the core maps
# (SQLite mmap_size), Mesa's GL drivers (llvmpipe under Xvfb).
mapped_kb() {
  awk -v pat="$2" '/^[0-9a-f]+-[0-9a-f]+ / {hit = ($0 ~ pat); next} hit && /^Rss:/ {sum += $2} END {print sum + 0}' \
    "/proc/$1/smaps" 2>/dev/null || echo 0
}
db_kb() { mapped_kb "$1" 'cairn\.db$'; }
gl_kb() { mapped_kb "$1" '(libgallium|libLLVM|swrast|dri/|libGLX_mesa|libEGL_mesa|libglapi)'; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
comm() { cat "/proc/$1/comm" 2>/dev/null || echo '?'; }
median() { sort -n | awk '{a[NR]=$1} END {if (NR == 0) print 0; else print (NR % 2) ? a[(NR + 1) / 2] : int((a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }

# Memory SETTLE seconds after ready (warm runs): the budget of 150 MB applies to the app's own
# process, cairn-desktop, which holds the archive, the watcher and Cairn's state. WebKit's web
# and network processes are reported beside it: their size is WebKitGTK's and the page's, the
# same for any WebKit app, and mostly shared libraries (their PSS says how much is really theirs).
settle="${SETTLE:-30}"
modes="${MODES:-cold warm}"
: > "$work/figures"
for mode in $modes; do
  for i in $(seq 1 "$runs"); do
    [ "$mode" = cold ] && evict
    # Not in $( ): start_app sets app_pid in this shell.
    start_app > "$work/ms"
    ms=$(cat "$work/ms")
    echo "$mode ms $ms" >> "$work/figures"
    printf '%s run %d: %d ms to an interactive window\n' "$mode" "$i" "$ms"
    printf '       %s\n' "$(sed 's/, $//' "$work/milestones")"
    if [ "$mode" = warm ] && [ "$settle" -gt 0 ]; then
      sleep "$settle"
      line="       after ${settle} s:"
      pss=0
      web=0
      for p in $(tree "$app_pid"); do
        pss=$((pss + $(pss_kb "$p")))
        name=$(comm "$p")
        kb=$(rss_kb "$p")
        case "$name" in
          cairn-desktop)
            echo "warm app_rss $kb" >> "$work/figures"
            echo "warm app_anon $(anon_kb "$p")" >> "$work/figures"
            echo "warm app_db $(db_kb "$p")" >> "$work/figures"
            echo "warm app_gl $(gl_kb "$p")" >> "$work/figures"
            ;;
          WebKitWebProces*) echo "warm web_rss $kb" >> "$work/figures"; web=$((web + kb)) ;;
          WebKitNetworkPr*) echo "warm net_rss $kb" >> "$work/figures"; web=$((web + kb)) ;;
          *) web=$((web + kb)) ;;
        esac
        line="$line $name $((kb / 1024)) MB,"
      done
      echo "warm webkit_rss $web" >> "$work/figures"
      echo "warm pss $pss" >> "$work/figures"
      echo "${line%,}; PSS of all $((pss / 1024)) MB"
    else
      sleep 1
    fi
    stop_app
  done
done

fig() { awk -v m="$1" -v k="$2" '$1 == m && $2 == k {print $3}' "$work/figures" | median; }
for mode in $modes; do
  echo "$mode start to interactive, median of $runs: $(fig "$mode" ms) ms (budget 1000 ms)"
done
if grep -q '^warm app_rss' "$work/figures"; then
  mb() { echo $(($(fig warm "$1") / 1024)); }
  echo "idle RSS ${settle} s after ready, median of $runs:"
  echo "  cairn-desktop (the budget, 150 MB): $(mb app_rss) MB; of it $(mb app_anon) MB anonymous, $(mb app_db) MB archive pages mapped by SQLite, $(mb app_gl) MB Mesa GL drivers"
  echo "  WebKit processes: web $(mb web_rss) MB, network $(mb net_rss) MB, all $(mb webkit_rss) MB"
  echo "  app + WebKit processes, proportional (PSS): $(mb pss) MB"
fi

# Idle CPU: one more start, 20 s of CPU time after it settled.
start_app > "$work/ms"
sleep "$settle"
pids=$(tree "$app_pid")
before=0
for p in $pids; do before=$((before + $(cpu_ticks "$p"))); done
sleep 20
after=0
for p in $pids; do after=$((after + $(cpu_ticks "$p"))); done
hz=$(getconf CLK_TCK)
cpu=$(awk -v t=$((after - before)) -v hz="$hz" 'BEGIN {printf "%.2f", 100 * t / hz / 20}')
echo "idle CPU over 20 s, ${settle} s after ready: ${cpu}% of one core (app + WebKit processes)"
stop_app
