# Sourced by the shell suites in tests/cli: `check NAME CONDITION [LOG]` counts a condition
# (evaluated after the name, so it may use the suite's variables) as passed or failed, a failure
# followed by LOG's last lines (a job's stderr); `report` prints the counts and exits non-zero if
# any failed.
pass=0; fail=0
check() {
  if eval "$2"; then pass=$((pass+1)); return; fi
  echo "FAIL: $1"; fail=$((fail+1))
  if [ -n "${3:-}" ] && [ -s "$3" ]; then tail -n 15 "$3" | sed 's/^/   | /'; fi
}
report() { echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; }
