#!/usr/bin/env bash
# The model-call benchmark (docs/BENCHMARKS.md, "Model calls"). Never run in CI.
#
# A fake OpenAI-compatible server answers after LATENCY (200 ms); tasklisp makes N (256)
# atomic calls through pmap at CONCURRENCY (32) with the run log on, off, and with the
# cache on; the official openai Python SDK (AsyncOpenAI, asyncio.gather under a
# semaphore) makes the same calls against the same server. Each line: seconds, peak RSS.
# Then the overhead per call of the log and the cache, measured against a server that
# answers at once (OVERHEAD_N calls), where nothing hides it.
#
# Needs: a release build (cargo build --release), python3 with `pip install openai`.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${TASKLISP:-$here/../../target/release/tasklisp}
n=${N:-256}
concurrency=${CONCURRENCY:-32}
latency=${LATENCY:-0.2}
overhead_n=${OVERHEAD_N:-2000}
work=$(mktemp -d)
. "$here/servers.sh"

# measure NAME COMMAND…: prints NAME, the command's own output (seconds), peak RSS.
measure() {
  local name=$1; shift
  local seconds
  seconds=$(/usr/bin/time -f '%M' -o "$work/rss" "$@" | tail -1)
  printf '%-34s %8.3f s %9d KB peak RSS\n' "$name" "$seconds" "$(tail -1 "$work/rss")"
}

slow=$(port); serve "$slow" "$latency"
url="http://127.0.0.1:$slow/v1"
flags=(--provider openai --model gpt-4o-mini --base-url "$url")
ideal=$(python3 -c "import math; print(round(math.ceil($n / $concurrency) * $latency, 3))")
echo "$n calls at concurrency $concurrency, $latency s each: ideal ${ideal} s"
export OPENAI_API_KEY=bench
TASKLISP_LOG=off measure "tasklisp, no log" "$bin" "${flags[@]}" run "$here/calls.sexp" "$n" "$concurrency"
TASKLISP_LOG="$work/log.db" measure "tasklisp, log on" "$bin" "${flags[@]}" run "$here/calls.sexp" "$n" "$concurrency"
TASKLISP_LOG="$work/cache.db" measure "tasklisp, log + cache (all misses)" "$bin" "${flags[@]}" --cache run "$here/calls.sexp" "$n" "$concurrency"
TASKLISP_LOG="$work/cache.db" measure "tasklisp, log + cache (all hits)" "$bin" "${flags[@]}" --cache run "$here/calls.sexp" "$n" "$concurrency"
echo "peak in flight at the server: $(curl -s "http://127.0.0.1:$slow/peak")"
measure "openai SDK (AsyncOpenAI + gather)" python3 "$here/sdk_client.py" "$url" "$n" "$concurrency"
echo "peak in flight at the server: $(curl -s "http://127.0.0.1:$slow/peak")"

fast=$(port); serve "$fast" 0
flags=(--provider openai --model gpt-4o-mini --base-url "http://127.0.0.1:$fast/v1")
echo "overhead: $overhead_n calls at concurrency $concurrency to a server that answers at once"
off=$(TASKLISP_LOG=off "$bin" "${flags[@]}" run "$here/calls.sexp" "$overhead_n" "$concurrency")
on=$(TASKLISP_LOG="$work/fast.db" "$bin" "${flags[@]}" --cache run "$here/calls.sexp" "$overhead_n" "$concurrency")
python3 -c "print(f'no log {$off:.3f} s, log + cache {$on:.3f} s: {($on - $off) / $overhead_n * 1000:.3f} ms per call')"
