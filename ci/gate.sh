#!/usr/bin/env bash
# Run the chaos suite into results/candidate, compare it with a baseline result folder,
# write the reports (Markdown for the pull request, HTML, JSON) and gate on the result.
#
#   ci/gate.sh [BASELINE_DIR]        default: results/baseline (e.g. main's CI artifact)
#
# Exit code: that of 'harness gate' (0 pass, 2 bad input, 3 recovery rule failed,
# 4 baseline case missing or skipped, 5 metric regression, 6 unknown with
# --fail-on-unknown; see reports/_gate.py). The suite's own failures do not stop the
# script before the report is written: the gate reads them from the results.
set -uo pipefail
cd "$(dirname "$0")/.."

baseline=${1:-results/baseline}
candidate=results/candidate
report=${REPORT_DIR:-report}
harness=${HARNESS:-harness}

rm -rf "$candidate"
"$harness" run scenarios --out "$candidate"
suite_status=$?
if [ "$suite_status" -eq 2 ]; then
  echo "ci/gate.sh: the suite could not run (bad input); no report" >&2
  exit 2
fi

"$harness" compare "$baseline" "$candidate" --out "$report" --format md,html,json || exit $?
# shellcheck disable=SC2086  # GATE_ARGS is a word list, e.g. "--threshold pass_rate=0"
"$harness" gate "$baseline" "$candidate" ${GATE_ARGS:-}
