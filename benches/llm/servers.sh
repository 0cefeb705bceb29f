# Sourced by run.sh and journal.sh: a free port, and the fake server started on it.
# Expects `here` (this directory) and `work` (a temporary directory, removed on exit
# with the servers).
trap 'kill $(jobs -p) 2>/dev/null; rm -rf "$work"' EXIT

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
serve() { # serve PORT LATENCY
  python3 "$here/fake_server.py" "$1" "$2" &
  for _ in $(seq 100); do curl -s "http://127.0.0.1:$1/peak" >/dev/null && return; sleep 0.1; done
  echo "the fake server did not start" >&2; exit 1
}
