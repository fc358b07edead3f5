#!/usr/bin/env bash
# The release-comparison demonstration: two configurations of the reference agent run the
# cache scenarios as two releases. The candidate stamps a volatile value at the top of its
# system prompt; the report shows the cached input share collapse, the misses labelled
# prefix_changed:system and the cost per successful task rise, and the gate fails (exit 5).
#
#   ci/release-demo.sh [OUT_DIR]     default: results/release-demo
set -uo pipefail
cd "$(dirname "$0")/.."

out=${1:-results/release-demo}
harness=${HARNESS:-harness}
releases=harness.examples.releases

rm -rf "$out"
"$harness" run scenarios/cache --agent "$releases:baseline" --out "$out/baseline" || exit $?
"$harness" run scenarios/cache --agent "$releases:volatile_system_prompt" \
  --out "$out/candidate" || exit $?
"$harness" compare "$out/baseline" "$out/candidate" --out "$out/report"
echo
cat "$out/report/report.md"
echo
"$harness" gate "$out/baseline" "$out/candidate" > /dev/null
status=$?
echo "harness gate exit code: $status (5 = a metric regressed beyond its threshold)"
