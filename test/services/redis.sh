#!/bin/sh
# test/services/redis.sh - a throwaway redis-server for the tests.
#
#   redis.sh start DIR [PORT]   start one on 127.0.0.1 (a free port, or PORT),
#                               no persistence, working directory DIR; print
#                               the port once `redis-cli ping` answers
#   redis.sh stop DIR           shut it down (SHUTDOWN NOSAVE, then the pid)
#
# REDIS_ARGS (optional) adds redis-server arguments (--requirepass, a Unix
# socket...); with a password, export REDISCLI_AUTH too so that the PING
# here can authenticate. Exits 77 (the automake "skipped" status) when
# redis-server or redis-cli is not installed. redis-server refuses --port 0, so free ports are probed:
# start on a candidate and keep it if the server comes up there. The pid,
# port and log stay in DIR (redis.pid, redis.port, redis.log).
set -u

command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || {
	echo "redis.sh: redis-server/redis-cli not installed" >&2
	exit 77
}

# wait_ping PORT TENTHS: 0 once the server answers PING
wait_ping() {
	i=0
	while [ "$i" -lt "$2" ]; do
		[ "$(redis-cli -p "$1" ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# launch DIR PORT: 0 when a server of ours answers on PORT
launch() {
	rm -f "$1/redis.pid"
	redis-server --bind 127.0.0.1 --port "$2" --save '' --appendonly no \
		--dir "$1" --pidfile "$1/redis.pid" --logfile "$1/redis.log" \
		--daemonize yes ${REDIS_ARGS:-} >/dev/null 2>&1 || return 1
	# A port in use makes the daemon exit after it forked: check that
	# the pidfile names a live process before trusting PING.
	i=0
	while [ ! -s "$1/redis.pid" ] && [ "$i" -lt 30 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	[ -s "$1/redis.pid" ] && kill -0 "$(cat "$1/redis.pid")" 2>/dev/null || return 1
	wait_ping "$2" 50 || return 1
	echo "$2" >"$1/redis.port"
}

start() {
	dir=$1
	mkdir -p "$dir" || exit 1
	dir=$(cd "$dir" && pwd)
	# One server per DIR: starting another would orphan the first.
	if [ -s "$dir/redis.pid" ] && kill -0 "$(cat "$dir/redis.pid")" 2>/dev/null; then
		echo "redis.sh: a server of $dir is running (pid $(cat "$dir/redis.pid"))" >&2
		exit 1
	fi
	if [ -n "${2:-}" ]; then
		launch "$dir" "$2" || { echo "redis.sh: cannot start on port $2" >&2; exit 1; }
		echo "$2"
		return
	fi
	# Candidates from a pid-dependent spot in 20000-29999, skipping ports
	# something already listens on (a ping that answers is not ours).
	p=$((20000 + $$ % 9000))
	tries=0
	while [ "$tries" -lt 40 ]; do
		if ! redis-cli -p "$p" ping >/dev/null 2>&1 && launch "$dir" "$p"; then
			echo "$p"
			return
		fi
		p=$((p + 17))
		tries=$((tries + 1))
	done
	echo "redis.sh: no free port found" >&2
	exit 1
}

. "$(dirname "$0")/lib.sh"      # gone

stop() {
	dir=$1
	[ -s "$dir/redis.pid" ] || return 0
	pid=$(cat "$dir/redis.pid")
	# SHUTDOWN NOSAVE first (it needs REDISCLI_AUTH with a password),
	# SIGTERM (a clean exit, nothing saved with --save '') if it failed.
	[ -f "$dir/redis.port" ] && redis-cli -p "$(cat "$dir/redis.port")" shutdown nosave >/dev/null 2>&1
	gone "$pid" 10 || { kill "$pid" 2>/dev/null; gone "$pid" 50; } || kill -9 "$pid" 2>/dev/null
	rm -f "$dir/redis.pid"
	return 0
}

case "${1:-}" in
start) [ $# -ge 2 ] || { echo "usage: $0 start DIR [PORT]" >&2; exit 2; }; start "$2" "${3:-}" ;;
stop) [ $# -ge 2 ] || { echo "usage: $0 stop DIR" >&2; exit 2; }; stop "$2" ;;
*) echo "usage: $0 start DIR [PORT] | stop DIR" >&2; exit 2 ;;
esac
