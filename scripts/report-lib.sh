# Helpers of the reproduction reports (scripts/pgc-report.sh, scripts/rescaled-report.sh): read
# pacer's CSV outputs by column name and compare and format numbers. Sourced, not run. A reader
# that finds no file, row or column prints what is missing and ends the whole report (it signals
# the sourcing script, since a failure inside a nested "$(...)" would otherwise go unnoticed), so
# a report is never written from absent numbers.
export LC_ALL=C
report_pid=$$
missing() { echo "report: $*" >&2; kill -TERM "$report_pid"; exit 3; }

# The line of CSV file $1 whose first field is $2 (empty when none).
csv_row() { [ -f "$1" ] && awk -F, -v m="$2" 'NR>1 && $1==m{print; exit}' "$1" || true; }

# Column $3 of the row of CSV file $1 whose first field is $2 (compare.csv).
csv_get1() {
  awk -F, -v m="$2" -v c="$3" -v f="$1" '
    NR==1{for(i=1;i<=NF;i++)h[$i]=i; if(!(c in h)){print f ": no column " c > "/dev/stderr"; bad=1; exit 3}; next}
    $1==m{print $h[c]; found=1; exit}
    END{if(!bad && !found){print f ": no row " m > "/dev/stderr"; exit 3}}' "$1" || missing "$1: $2 $3"
}

# Column $4 of the row of against.csv $1 for method $2 and metric $3.
csv_get() {
  awk -F, -v m="$2" -v k="$3" -v c="$4" -v f="$1" '
    NR==1{for(i=1;i<=NF;i++)h[$i]=i; if(!(c in h)){print f ": no column " c > "/dev/stderr"; bad=1; exit 3}; next}
    $1==m && $2==k{print $h[c]; found=1; exit}
    END{if(!bad && !found){print f ": no row " m "," k > "/dev/stderr"; exit 3}}' "$1" || missing "$1: $2 $3 $4"
}

# "mean [low, high]" of compare.csv $1, method $2, quantity $3 (time_to_target, final_loss, ...),
# "≥ mean" when seeds were censored.
estimate() {
  local mean low high cens
  mean=$(csv_get1 "$1" "$2" "${3}_mean")
  low=$(csv_get1 "$1" "$2" "${3}_low")
  high=$(csv_get1 "$1" "$2" "${3}_high")
  cens=$(csv_get1 "$1" "$2" "${3}_censored")
  if [ "${cens:-0}" != 0 ]; then echo "≥ $(num "$mean" 4) ($cens of the seeds missed the target)"
  elif [ -z "$low" ]; then num "$mean" 4
  else echo "$(num "$mean" 4) [$(num "$low" 4), $(num "$high" 4)]"; fi
}

# The number after "$2": in JSON file $1 (the first occurrence).
json_number() {
  awk -v k="\"$2\":" -v f="$1" '$1==k{v=$2; sub(/,$/,"",v); print v; found=1; exit}
    END{if(!found){print f ": no number " k > "/dev/stderr"; exit 3}}' "$1" || missing "$1: $2"
}

# Arithmetic and comparisons, in awk's doubles. An empty operand (a number pacer left blank: an
# interval of one seed) makes calc's expression invalid, which ends the report, and `less` false.
calc() { awk "BEGIN{printf \"%.17g\n\", $1}" 2>/dev/null || missing "calc: cannot evaluate '$1'"; }
less() { awk -v a="$1" -v b="$2" 'BEGIN{exit !(a != "" && b != "" && a+0 < b+0)}'; }
min() { awk -v a="$1" -v b="$2" 'BEGIN{print (b == "" || (a != "" && a+0 < b+0)) ? a : b}'; }
max() { awk -v a="$1" -v b="$2" 'BEGIN{print (b == "" || (a != "" && a+0 > b+0)) ? a : b}'; }
# $1 with $2 significant digits (default 3); "—" when empty.
num() { awk -v x="$1" -v p="${2:-3}" 'BEGIN{if (x=="") print "—"; else printf("%." p "g\n", x)}'; }
minutes() { awk -v s="$1" 'BEGIN{if (s=="?") print "(not recorded)"; else printf("%d min %02d s\n", s/60, s%60)}'; }

# " (k censored)" for a count k > 0 of censored pairs, else nothing.
censored_note() { if [ "${1:-0}" != 0 ]; then echo " ($1 censored)"; fi; }

# "identical" when method $3's rows of two runs.csv files (every seed's values) are equal, else
# "DIFFERENT".
same_row() {
  local a b
  a=$(awk -F, -v m="$3" 'NR>1 && $1==m' "$1" 2>/dev/null)
  b=$(awk -F, -v m="$3" 'NR>1 && $1==m' "$2" 2>/dev/null)
  if [ "$a" = "$b" ] && [ -n "$a" ]; then
    echo "identical"
  else
    echo "DIFFERENT"
  fi
}
