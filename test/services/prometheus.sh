#!/bin/sh
# test/services/prometheus.sh - a throwaway Prometheus server for the
# tests.
#
#   prometheus.sh start DIR TARGET [INTERVAL]
#                        start one on 127.0.0.1 with its config, its data
#                        and its log in DIR, scraping TARGET (host:port,
#                        path /metrics) as job "intspect" every INTERVAL
#                        (default 1s); print its web port once /-/ready
#                        answers 200
#   prometheus.sh stop DIR stop it (SIGTERM, then SIGKILL after 10 s)
#
# Exits 77 (the automake "skipped" status) when prometheus or python3 is
# not installed (Debian: prometheus).
set -u

command -v prometheus >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 || {
	echo "prometheus.sh: prometheus (package prometheus) or python3 not installed" >&2
	exit 77
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

ready() {
	python3 - "$1" <<'PY' >/dev/null 2>&1
import sys, urllib.request
r = urllib.request.urlopen('http://127.0.0.1:%s/-/ready' % sys.argv[1], timeout=1)
sys.exit(0 if r.status == 200 else 1)
PY
}

. "$(dirname "$0")/lib.sh"      # gone

# launch DIR PORT: 0 when it answers ready on PORT
launch() {
	d=$1
	prometheus --config.file="$d/prometheus.yml" --storage.tsdb.path="$d/data" \
		--web.listen-address="127.0.0.1:$2" --log.level=warn >>"$d/prometheus.log" 2>&1 &
	echo $! >"$d/prometheus.pid"
	i=0
	while [ "$i" -lt 200 ]; do
		kill -0 "$(cat "$d/prometheus.pid")" 2>/dev/null || return 1
		if ready "$2"; then
			echo "$2" >"$d/prometheus.port"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	kill "$(cat "$d/prometheus.pid")" 2>/dev/null
	return 1
}

start() {
	dir=$1
	mkdir -p "$dir" || exit 1
	dir=$(cd "$dir" && pwd)
	if [ -s "$dir/prometheus.pid" ] && kill -0 "$(cat "$dir/prometheus.pid")" 2>/dev/null; then
		echo "prometheus.sh: a server of $dir is running (pid $(cat "$dir/prometheus.pid"))" >&2
		exit 1
	fi
	cat >"$dir/prometheus.yml" <<YML
global:
  scrape_interval: $3
  scrape_timeout: $3
  evaluation_interval: $3
scrape_configs:
  - job_name: intspect
    static_configs:
      - targets: ['$2']
YML
	tries=0
	while [ "$tries" -lt 5 ]; do
		if launch "$dir" "$(free_port)"; then
			cat "$dir/prometheus.port"
			return
		fi
		tries=$((tries + 1))
	done
	echo "prometheus.sh: cannot start prometheus (log: $dir/prometheus.log)" >&2
	exit 1
}

stop() {
	dir=$1
	[ -s "$dir/prometheus.pid" ] || return 0
	pid=$(cat "$dir/prometheus.pid")
	kill "$pid" 2>/dev/null
	gone "$pid" 100 || { kill -9 "$pid" 2>/dev/null; gone "$pid" 20; }
	rm -f "$dir/prometheus.pid"
	return 0
}

case "${1:-}" in
start)
	[ $# -eq 3 ] || [ $# -eq 4 ] || { echo "usage: $0 start DIR TARGET [INTERVAL]" >&2; exit 2; }
	start "$2" "$3" "${4:-1s}" ;;
stop) [ $# -ge 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
*) echo "usage: $0 start DIR TARGET [INTERVAL] | stop DIR" >&2; exit 2 ;;
esac
