# test/tools/checks.sh - what the test scripts share (sourced): counted
# checks and the closing line the test command adds up.
#   ok TEXT          a check that passed
#   bad TEXT [FILE]  one that failed, with FILE's lines indented under it
#   summary NAME     "NAME: P passed, F failed"; false when any failed
# Sourcing it again keeps the counts.
pass=${pass:-0} fail=${fail:-0}
ok() { echo "ok $1"; pass=$((pass + 1)); }
bad() {
	echo "FAIL $1"
	[ $# -gt 1 ] && [ -s "$2" ] && sed 's/^/  | /' "$2"
	fail=$((fail + 1))
}
summary() {
	echo "$1: $pass passed, $fail failed"
	[ "$fail" -eq 0 ]
}
