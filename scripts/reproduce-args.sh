# The command line of the reproduction scripts (scripts/reproduce-pgc.sh, reproduce-rescaled.sh).
# Sourced, not run: `parse_reproduce_args SCRIPT_PATH WITH_JOBS(0|1) "$@"` sets quick, full_data,
# report_only, seeds ("" = the mode's default), jobs (2 unless --jobs), out ("" = default) and
# command_line, prints SCRIPT_PATH's header comment for --help, and exits 2 with a message naming
# the argument for anything else.
parse_reproduce_args() {
  local script=$1 with_jobs=$2 name
  name=$(basename "$1")
  shift 2
  quick=0 full_data=0 report_only=0 seeds="" jobs=2 out=""
  command_line="scripts/$name"  # the command that makes the runs: without --report-only
  local arg
  for arg in "$@"; do [ "$arg" = --report-only ] || command_line+=" $arg"; done
  while [ $# -gt 0 ]; do
    case "$1" in
      --quick) quick=1 ;;
      --full-data) full_data=1 ;;
      --report-only) report_only=1 ;;
      --seeds) seeds=${2:?--seeds needs a number}; shift ;;
      --jobs) [ "$with_jobs" = 1 ] || { echo "$name: unknown argument '$1' (see --help)" >&2; exit 2; }
        jobs=${2:?--jobs needs a number}; shift ;;
      --out) out=${2:?--out needs a folder}; shift ;;
      -h|--help) sed -n '2,/^set -euo/p' "$script" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
      *) echo "$name: unknown argument '$1' (see --help)" >&2; exit 2 ;;
    esac
    shift
  done
  case "$seeds" in
    '') ;;
    *[!0-9]*|0|1) echo "$name: --seeds: expected an integer >= 2 (intervals need two seeds), got '$seeds'" >&2; exit 2 ;;
  esac
  case "$jobs" in *[!0-9]*|0|'') echo "$name: --jobs: expected a positive integer, got '$jobs'" >&2; exit 2 ;; esac
}
