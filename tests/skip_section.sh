# shellcheck shell=bash
# Sections a test script cannot run on this machine are skipped out loud:
# a line when one is passed over and a summary at the end, beside the
# sections that ran, whose status stays the script's. (A script whose
# every section can be skipped must exit 77 itself.)
#   source "$(dirname "$0")/../skip_section.sh"
#   skip_section NAME WHY ... skips_summary
# SKIP_WORD: the word the per-section line starts with (default SKIP;
# test_allreduce_gpu.sh's is "skip", which scripts/gpu-check.sh greps).
skipped=()
skip_section() {  # NAME WHY
  skipped+=("$1 ($2)")
  echo "${SKIP_WORD:-SKIP}: $1: $2 (this section only; the others run)"
}
skips_summary() {
  [ ${#skipped[@]} -eq 0 ] || echo "SKIP: ${#skipped[@]} section(s) not run here: ${skipped[*]}"
}
