#!/usr/bin/env bash
# Runs every fuzz target of the repository (go test -fuzz), one after the
# other, each for FUZZTIME, and prints how many inputs each one tried.
#
#   FUZZTIME=3s             the quick mode make test runs (5s when unset)
#   FUZZTIME=5m             the long mode (make fuzz)
#   FUZZ_MATCH=regexp       only the targets whose "pkg.FuzzName" matches
#   FUZZ_REFERENCE=1        the targets that have one also compare every
#                           input with the Python reference (slower)
#   FUZZ_COMPARE=1          at the end, compare everything the fuzzers
#                           kept (the build cache's corpora) with the
#                           reference: the *SeedsAgainst* tests with
#                           FUZZ_GENERATED=1
#
# A target that fails leaves its input under testdata/fuzz/<target> (go
# test's rule), the run goes on with the others, and the script exits 1.
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
GO=${GO:-go}
FUZZTIME=${FUZZTIME:-5s}
FUZZ_MATCH=${FUZZ_MATCH:-.}
# Minimizing a new input is capped: in the quick mode it would eat the
# fuzzing time; a crasher is still written, whole if need be.
FUZZMINIMIZETIME=${FUZZMINIMIZETIME:-2s}

# Every "func FuzzXxx(f *testing.F)" in a test file: "dir FuzzXxx".
targets=$(git ls-files '*_test.go' | xargs grep -H '^func Fuzz[A-Za-z0-9_]*(f \*testing.F)' |
  sed -E 's|^(.*)/[^/]*_test.go:func (Fuzz[A-Za-z0-9_]*)\(.*|\1 \2|' | sort)
if [ -z "$targets" ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi

# deadline_race: the log is the coordinator's race at the end of
# -fuzztime, not a finding: "context deadline exceeded" is the failure's
# only line, and no input was written, no panic or test error printed.
deadline_race() {
  grep -q '^    context deadline exceeded$' "$1" &&
    ! grep -qE 'Failing input written|panic:|_test\.go:[0-9]+:' "$1"
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
failed=()
summary=()
start=$SECONDS

# One instrumented test binary per package (go test -c -fuzz), built
# before its first target and run for each of them (-test.fuzz), as go
# test -fuzz runs it: in the package's directory, with go's fuzz cache
# (GOCACHE/fuzz/<import path>) as its corpus cache, which FUZZ_COMPARE
# reads. A build per target cost more than the fuzzing in the quick mode
# (17 packages, 27 targets: issue 33).
fuzzcache="$("$GO" env GOCACHE)/fuzz"
declare -A built=() imports=()
# build dir log: sets bin to the package's binary and importpath, built
# on the first call; bin is "" if it does not build (log says why).
build() {
  local dir=$1 log=$2 blog
  bin="$out/bin/$(echo "$dir" | tr / _).test"
  blog="$bin.log"
  if [ -z "${built[$dir]:-}" ]; then
    mkdir -p "$out/bin"
    built[$dir]=none
    if "$GO" test -c -fuzz . -o "$bin" "./$dir" >"$blog" 2>&1 </dev/null && [ -x "$bin" ] &&
      imports[$dir]=$("$GO" list -f '{{.ImportPath}}' "./$dir" 2>>"$blog" </dev/null); then
      built[$dir]=$bin
    fi
  fi
  bin=${built[$dir]} importpath=${imports[$dir]:-}
  if [ "$bin" = none ]; then
    bin=
    cp "$blog" "$log"
  fi
}
# fuzz dir name log: one target for FUZZTIME, from the package's binary.
fuzz() {
  (cd "$1" && "$bin" -test.paniconexit0 -test.run '^$' -test.fuzz "^${2}\$" -test.fuzztime "$FUZZTIME" \
    -test.fuzzminimizetime "$FUZZMINIMIZETIME" -test.fuzzcachedir "$fuzzcache/$importpath") >"$3" 2>&1 </dev/null
}

while read -r dir name; do
  [[ "$dir.$name" =~ $FUZZ_MATCH ]] || continue
  log="$out/$(echo "$dir.$name" | tr / _).log"
  t0=$SECONDS
  build "$dir" "$log"
  if [ -z "$bin" ]; then
    rc=1
  else
    fuzz "$dir" "$name" "$log"
    rc=$?
  fi
  if [ $rc -ne 0 ] && [ -n "$bin" ] && deadline_race "$log"; then
    # Go's fuzz coordinator can report the end of -fuzztime itself as a
    # failure (golang/go#75804, fixed in Go 1.27): a bare "context
    # deadline exceeded", no failing input written. Try once more; a
    # second failure of any kind counts.
    echo "fuzz: $dir $name: the end of -fuzztime reported as a failure (golang/go#75804); once more"
    fuzz "$dir" "$name" "$log"
    rc=$?
  fi
  # The last "execs: N" line is the total.
  execs=$(grep -oE 'execs: [0-9]+' "$log" | tail -1 | grep -oE '[0-9]+')
  execs=${execs:-0}
  secs=$((SECONDS - t0))
  if [ $rc -eq 0 ]; then
    result=ok
  else
    result=FAIL
    failed+=("$dir.$name")
    echo "=== $dir $name failed:"
    grep -v '^fuzz: elapsed' "$log" | head -40
  fi
  line=$(printf '%-28s %-22s %12s execs  %4ss  %s' "$dir" "$name" "$execs" "$secs" "$result")
  echo "fuzz: $line"
  summary+=("$line")
done <<<"$targets"

echo
echo "fuzz: executions per target (FUZZTIME=$FUZZTIME${FUZZ_REFERENCE:+, against the reference}), $((SECONDS - start)) s in all:"
printf '  %s\n' "${summary[@]}"

if [ "${FUZZ_COMPARE:-}" = 1 ]; then
  echo "fuzz: comparing every kept input with the reference"
  pkgs=$(git ls-files '*_test.go' | xargs grep -l '^func Test[A-Za-z]*SeedsAgainst' | xargs -n1 dirname | sort -u | sed 's|^|./|')
  # shellcheck disable=SC2086
  FUZZ_GENERATED=1 "$GO" test -count=1 -run 'SeedsAgainst' -v $pkgs >"$out/compare.log" 2>&1 || failed+=("comparison with the reference")
  grep -E 'compared|^(--- FAIL|FAIL|ok)|_test.go:[0-9]+: [^0-9]' "$out/compare.log" | head -200
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: FAILED: ${failed[*]}" >&2
  exit 1
fi
