# test/services/lib.sh - what the service scripts share (sourced).

# gone PID TENTHS: 0 once PID has exited, 1 if it still runs after TENTHS
# tenths of a second
gone() {
	i=0
	while kill -0 "$1" 2>/dev/null; do
		[ "$i" -ge "$2" ] && return 1
		sleep 0.1
		i=$((i + 1))
	done
	return 0
}
