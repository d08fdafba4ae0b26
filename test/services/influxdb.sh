#!/bin/sh
# test/services/influxdb.sh - a throwaway InfluxDB 1.x (influxd) for the
# tests.
#
#   influxdb.sh start DIR [HTTP-PORT UDP-PORT]
#                        start one on 127.0.0.1 with its data, its config
#                        and its log in DIR: HTTP on a free port (or
#                        HTTP-PORT), authentication off, a UDP listener on
#                        a free port (or UDP-PORT) writing into database
#                        "udpdb", the RPC service on a third free port,
#                        no reporting; print "HTTP-PORT UDP-PORT" once
#                        /ping answers 204
#   influxdb.sh stop DIR stop it (SIGTERM, then SIGKILL after 10 s)
#
# Starting again with the ports it printed (a restart) keeps the data. The
# pid, ports, config and log stay in DIR (influxd.pid, influxd.ports,
# influxd.conf, influxd.log). Exits 77 (the automake "skipped" status) when
# influxd or python3 is not installed.
set -u

command -v influxd >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1 || {
	echo "influxdb.sh: influxd (package influxdb) or python3 not installed" >&2
	exit 77
}

# free_port tcp|udp: a port the kernel has just handed out on 127.0.0.1
# (another process may take it before influxd binds it: start retries)
free_port() {
	python3 - "$1" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM if sys.argv[1] == 'tcp' else socket.SOCK_DGRAM)
s.bind(('127.0.0.1', 0))
print(s.getsockname()[1])
EOF
}

# ping PORT: 0 when /ping answers 204
ping() {
	python3 - "$1" <<'EOF' >/dev/null 2>&1
import sys, urllib.request
r = urllib.request.urlopen('http://127.0.0.1:%s/ping' % sys.argv[1], timeout=1)
sys.exit(0 if r.status == 204 else 1)
EOF
}

# launch DIR HTTP UDP RPC: 0 when our influxd answers on HTTP
launch() {
	d=$1
	cat >"$d/influxd.conf" <<EOF
reporting-disabled = true
bind-address = "127.0.0.1:$4"

[meta]
  dir = "$d/meta"

[data]
  dir = "$d/data"
  wal-dir = "$d/wal"
  query-log-enabled = false

[monitor]
  store-enabled = false

[http]
  enabled = true
  bind-address = "127.0.0.1:$2"
  auth-enabled = false
  log-enabled = false

[[udp]]
  enabled = true
  bind-address = "127.0.0.1:$3"
  database = "udpdb"
  # a burst of datagrams from one run must not overflow the socket (the
  # kernel's default, ~200 KiB, holds about a hundred): 4 MiB, this
  # machine's net.core.rmem_max; a larger value would be capped to it
  read-buffer = 4194304
  batch-size = 1000
  batch-timeout = "100ms"
EOF
	influxd run -config "$d/influxd.conf" >>"$d/influxd.log" 2>&1 &
	echo $! >"$d/influxd.pid"
	i=0
	while [ "$i" -lt 150 ]; do
		# a port in use makes influxd exit: stop waiting then
		kill -0 "$(cat "$d/influxd.pid")" 2>/dev/null || return 1
		if ping "$2"; then
			echo "$2 $3" >"$d/influxd.ports"
			return 0
		fi
		sleep 0.1
		i=$((i + 1))
	done
	kill "$(cat "$d/influxd.pid")" 2>/dev/null
	return 1
}

start() {
	dir=$1
	mkdir -p "$dir" || exit 1
	dir=$(cd "$dir" && pwd)
	# One server per DIR: starting another would orphan the first.
	if [ -s "$dir/influxd.pid" ] && kill -0 "$(cat "$dir/influxd.pid")" 2>/dev/null; then
		echo "influxdb.sh: a server of $dir is running (pid $(cat "$dir/influxd.pid"))" >&2
		exit 1
	fi
	if [ -n "${2:-}" ]; then
		launch "$dir" "$2" "$3" "$(free_port tcp)" || {
			echo "influxdb.sh: cannot start on ports $2, $3 (log: $dir/influxd.log)" >&2
			exit 1
		}
		echo "$2 $3"
		return
	fi
	tries=0
	while [ "$tries" -lt 5 ]; do
		h=$(free_port tcp) u=$(free_port udp) r=$(free_port tcp)
		if [ "$h" != "$r" ] && launch "$dir" "$h" "$u" "$r"; then
			echo "$h $u"
			return
		fi
		tries=$((tries + 1))
	done
	echo "influxdb.sh: cannot start influxd (log: $dir/influxd.log)" >&2
	exit 1
}

. "$(dirname "$0")/lib.sh"      # gone

stop() {
	dir=$1
	[ -s "$dir/influxd.pid" ] || return 0
	pid=$(cat "$dir/influxd.pid")
	kill "$pid" 2>/dev/null
	gone "$pid" 100 || { kill -9 "$pid" 2>/dev/null; gone "$pid" 20; }
	rm -f "$dir/influxd.pid"
	return 0
}

case "${1:-}" in
start)
	[ $# -eq 2 ] || [ $# -eq 4 ] || { echo "usage: $0 start DIR [HTTP-PORT UDP-PORT]" >&2; exit 2; }
	start "$2" "${3:-}" "${4:-}" ;;
stop) [ $# -ge 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
*) echo "usage: $0 start DIR [HTTP-PORT UDP-PORT] | stop DIR" >&2; exit 2 ;;
esac
