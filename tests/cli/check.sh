# Sourced by the shell suites in tests/cli: `check NAME CONDITION` counts a condition (evaluated
# after the name, so it may use the suite's variables) as passed or failed, and `report` prints
# the counts and exits non-zero if any failed.
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass+1)); else echo "FAIL: $1"; fail=$((fail+1)); fi; }
report() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; }
