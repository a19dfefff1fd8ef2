#!/bin/sh
# make demo: render the bundled example node into a scratch directory with
# our os-apply-config, then show what was written.
set -eu
bin=${1:-bin}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/oac-demo.XXXXXX")
echo "== os-apply-config -t examples/node/templates -o $out -m examples/node/metadata/*.json"
"$bin/os-apply-config" -t "$here/node/templates" -o "$out" \
  -m "$here"/node/metadata/*.json --fallback-metadata
echo
echo "== files written under $out"
(cd "$out" && find . -type f -printf '%M %u:%g %6s  %p\n' | sort -k4)
for f in etc/nova/nova.conf; do
  if [ -f "$out/$f" ]; then
    echo
    echo "== $f"
    cat "$out/$f"
  fi
done
echo
echo "== a second run changes nothing (files already match):"
"$bin/os-apply-config" -t "$here/node/templates" -o "$out" \
  -m "$here"/node/metadata/*.json --fallback-metadata 2>&1 | grep -E 'files written|success'
