#!/usr/bin/env bash
# The journal's cost (docs/BENCHMARKS.md, "Durable runs"). Never run in CI.
#
# 1. The model-call workload of run.sh (N=256 calls through pmap at CONCURRENCY=32,
#    LATENCY=0.2 s each) with the run log (and so the journal) off and on, RUNS times.
# 2. OVERHEAD_N calls to a server that answers at once, log off and on: the log's and
#    journal's cost per call, with no waiting to hide it.
# 3. A run of RESUME_N calls (to the `echo` provider, so no server's speed counts)
#    stopped by an error after its last call, then resumed, RUNS times: the seconds
#    until the resume's first live call is answered (loading and replaying the
#    journal, then one live call).
#
# Needs: a build of tasklisp (TASKLISP=path, default the release build), python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
bin=${TASKLISP:-$here/../../target/release/tasklisp}
n=${N:-256}
concurrency=${CONCURRENCY:-32}
latency=${LATENCY:-0.2}
runs=${RUNS:-3}
overhead_n=${OVERHEAD_N:-2000}
resume_n=${RESUME_N:-10000}
work=$(mktemp -d)
. "$here/servers.sh"

export OPENAI_API_KEY=bench

slow=$(port); serve "$slow" "$latency"
flags=(--provider openai --model gpt-4o-mini --base-url "http://127.0.0.1:$slow/v1")
echo "$n calls at concurrency $concurrency, $latency s each (load: $(cut -d' ' -f1-3 /proc/loadavg))"
for i in $(seq "$runs"); do
  off=$(TASKLISP_LOG=off "$bin" "${flags[@]}" run "$here/calls.sexp" "$n" "$concurrency")
  on=$(TASKLISP_LOG="$work/slow$i.db" "$bin" "${flags[@]}" run "$here/calls.sexp" "$n" "$concurrency")
  echo "  no log ${off} s, log and journal ${on} s"
done

fast=$(port); serve "$fast" 0
flags=(--provider openai --model gpt-4o-mini --base-url "http://127.0.0.1:$fast/v1")
off=$(TASKLISP_LOG=off "$bin" "${flags[@]}" run "$here/calls.sexp" "$overhead_n" "$concurrency")
on=$(TASKLISP_LOG="$work/fast.db" "$bin" "${flags[@]}" run "$here/calls.sexp" "$overhead_n" "$concurrency")
python3 -c "print(f'{$overhead_n} calls answered at once: no log {$off:.3f} s, log and journal {$on:.3f} s: {($on - $off) / $overhead_n * 1000:.3f} ms per call')"

cat > "$work/long.sexp" <<'LISP'
(deftask ask (i) :prompt "item {{i}}")
(pmap ask (range (string->number (car *args*))) :concurrency 32)
(when (getenv "STOP") (error "stopped"))
(println (get (ask "live") "content"))
LISP
export TASKLISP_LOG="$work/resume.db"
for i in $(seq "$runs"); do
  STOP=1 "$bin" --provider echo run "$work/long.sexp" "$resume_n" 2>/dev/null || true
  id=$("$bin" --json log -n 1 | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["id"])')
  # The clock stops when the live call's answer is printed, not when the process has
  # also finished writing its log.
  python3 - "$resume_n" "$bin" resume "$id" <<'PY'
import subprocess, sys, time
start = time.monotonic()
resume = subprocess.Popen(sys.argv[2:], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
resume.stdout.readline()
first = time.monotonic() - start
resume.wait()
print(f"resume of a run of {sys.argv[1]} calls: first live call answered after {first:.3f} s "
      f"(process done after {time.monotonic() - start:.3f} s)")
PY
done
