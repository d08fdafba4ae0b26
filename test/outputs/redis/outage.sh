# test/outputs/redis/outage.sh - sourced by run.sh and tls.sh: an outage
# of the test's redis-server during a run of intspect.
#
#   redis_outage CONF ERR DIR PLAINPORT RESTART...
#       intspect -C CONF reads a 600-packet capture ($ocap) fed a packet
#       every 4 ms (stderr to ERR); 0.7 s in, the server of DIR (plain
#       port PLAINPORT) saves and stops (SHUTDOWN SAVE: what was
#       delivered survives), and a second later RESTART... brings it back
#       (bad NAME on failure: $outage_name). Sets ist to intspect's exit
#       status.
redis_outage() {
	_conf=$1 _err=$2 _dir=$3 _port=$4
	shift 4
	python3 "$src/test/outputs/redis/slowcat.py" "$ocap" 4 |
		"$bin" -C "$_conf" -r - >/dev/null 2>"$_err" &
	_ipid=$!
	sleep 0.7
	_rpid=$(cat "$_dir/redis.pid")
	redis-cli -p "$_port" SHUTDOWN SAVE >/dev/null 2>&1
	while kill -0 "$_rpid" 2>/dev/null; do sleep 0.05; done
	sleep 1
	"$@" >/dev/null || bad "$outage_name" "restart failed"
	wait "$_ipid"
	ist=$?
}
