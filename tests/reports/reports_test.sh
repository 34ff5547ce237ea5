#!/usr/bin/env bash
# The reproductions' claims files (configs/claims/pgc.toml, rescaled.toml) judged by `pacer
# claims` on small comparisons made here with the real pacer (synthetic least squares and the
# closed-form quadratic), in the folder layout the reproduction scripts write: every claim is
# judged, the verdicts that the fixtures determine are the expected ones, and a missing or
# inconsistent input is an error that names it and leaves the earlier report.md as it was. (The
# rules themselves, case by case: tests/experiment/claims_test.cc.)
#   reports_test.sh CHECK PACER WORK_DIR SOURCE_DIR      CHECK: pgc or rescaled
set -euo pipefail
check=$1 pacer=$2 work=$3/$1 root=$4
rm -rf "$work"
mkdir -p "$work"
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
expect_line() {  # FILE PATTERN(grep -E) WHAT: some line of FILE matches
  grep -Eq -- "$2" "$1" || fail "$3: no line of $1 matches /$2/"
}

pgc_fixture() {
  cat >"$work/ls.toml" <<'EOF'
seed = 1
workers = 12
max_steps = 300
[data]
source = "synthetic"
generator = "least_squares"
samples = 1200
features = 5
[model]
name = "least_squares"
[training]
batch = 8
[optimizer]
lr = 0.05
[method]
name = "dgd"
[timing]
model = "random_stragglers"
tau = 1.0
k = 2
delay_mean = 1.0
[target]
loss = 0.3
hold = 3
EOF
  local out=$work/pgc c=$work/ls.toml
  local a=dgd,gc-fr:s=2,gc-cr:s=2,pgc-fr:s=1,pgc-cr:s=1
  local b=dgd,is-sgd:k=2,is-gc-cr:s=2,pgc-fr:s=2,pgc-cr:s=2,pgc-fr:s=3,pgc-cr:s=3
  local regime extra sets
  for regime in pacer authors; do
    extra=pgc-fr:s=2:stagger=true sets=()
    [ $regime = pacer ] ||
      extra=pgc-fr:s=2:straggler_policy=queue,pgc-cr:s=2:straggler_policy=queue \
        sets=(--set training.sampling=fixed)
    "$pacer" -q compare "$c" --methods "$a" --seeds 3 --baseline dgd "${sets[@]}" \
      --out "$out/$regime/target-a" >/dev/null
    "$pacer" -q compare "$c" --methods "$b,$extra" --seeds 3 --baseline dgd "${sets[@]}" \
      --out "$out/$regime/target-b" >/dev/null
  done
  local step=dgd
  for s in 1 2 3; do step+=,is-sgd:k=$s,gc-fr:s=$s,gc-cr:s=$s,is-gc-cr:s=$s,pgc-fr:s=$s,pgc-cr:s=$s; done
  "$pacer" -q sweep "$c" --methods "$step" --grid timing.delay_mean=1,2 --seeds 3 \
    --budget steps=60 --baseline dgd --set target.stop=false --jobs 2 --out "$out/pacer/step-time" \
    >/dev/null
  "$pacer" -q sweep "$c" --methods dgd,gc-fr:s=2,pgc-fr:s=2,pgc-cr:s=2 --grid timing.k=1,4 \
    --grid timing.delay_mean=0.25,4 --seeds 2 --jobs 2 --out "$out/pacer/map" >/dev/null
}

# The verdict of claim $2 in regime $3 of claims.csv $1.
verdict_of() { awk -F, -v c="\"$2\"" -v r="$3" '$1==c && $2==r {print $3; exit}' "$1"; }
# The outcome of the case whose label is $2 in check $3 (its name) of claims.csv $1.
case_outcome() {
  awk -F'"' -v k="$2" -v n="$3" '$4==n && $6==k {n2=split($0, f, ","); print f[n2]; exit}' "$1"
}

check_pgc() {
  pgc_fixture
  local out=$work/pgc
  "$pacer" claims "$root/configs/claims/pgc.toml" "$out" --mode quick --command test \
    >"$work/pgc.txt" || { fail "pacer claims failed: $(tail -3 "$work/pgc.txt")"; return; }
  local csv=$out/claims.csv report=$out/report.md
  expect_line "$report" '^## Verdicts' "report.md has the verdicts"
  expect_line "$work/pgc.txt" '^\| 5 \|' "the verdicts are printed"
  # Every claim is judged in the regimes it names.
  local claim
  for claim in 1 2 3 4 5; do
    [ -n "$(verdict_of "$csv" "$claim" pacer)" ] || fail "claim $claim not judged in pacer's regime"
  done
  for claim in 3 4 5; do
    [ -n "$(verdict_of "$csv" "$claim" authors)" ] || fail "claim $claim not judged in the authors' regime"
  done
  # Claim 5 is a property of the placement alone: n/(n − s) whatever the model; claim 1 of the
  # work per job, one unit for PGC and DGD alike.
  [ "$(verdict_of "$csv" 5 pacer)" = reproduced ] || fail "claim 5: $(verdict_of "$csv" 5 pacer)"
  [ "$(verdict_of "$csv" 5 authors)" = reproduced ] || fail "claim 5 (authors)"
  [ "$(verdict_of "$csv" 1 pacer)" = reproduced ] || fail "claim 1: $(verdict_of "$csv" 1 pacer)"
  # With the same rows for every copy, exact decoding takes DGD's steps.
  local name="exact decoding's steps equal DGD's (GC-CR, IS-GC)"
  [ "$(case_outcome "$csv" gc-cr:s=2 "$name" | head -1)" = holds ] ||
    fail "GC-CR's steps are not DGD's: $(grep -F gc-cr:s=2 "$csv" | head -2)"

  # A DGD that differs between the two groups is an error naming the comparisons.
  local edit=$work/pgc-edit
  cp -r "$out" "$edit"
  awk -F, -v OFS=, 'NR > 1 && $1 == "dgd" && !done { $10 = $10 + 1; done = 1 } {print}' \
    "$edit/pacer/target-b/runs.csv" >"$edit/runs.new"
  mv "$edit/runs.new" "$edit/pacer/target-b/runs.csv"
  cp "$edit/report.md" "$work/before.md"
  if "$pacer" claims "$root/configs/claims/pgc.toml" "$edit" >/dev/null 2>"$work/err"; then
    fail "claims judged with two different DGDs"
  fi
  grep -q "not of the same runs" "$work/err" || fail "the error: $(cat "$work/err")"
  cmp -s "$edit/report.md" "$work/before.md" || fail "a failed judgement changed report.md"
  # A missing comparison is an error naming it.
  cp "$out/pacer/target-b/runs.csv" "$edit/pacer/target-b/runs.csv"
  rm -r "$edit/authors/target-a"
  if "$pacer" claims "$root/configs/claims/pgc.toml" "$edit" >/dev/null 2>"$work/err"; then
    fail "claims judged without authors/target-a"
  fi
  grep -q "authors/target-a/runs.csv: no such file" "$work/err" ||
    fail "the error does not name the folder: $(cat "$work/err")"
}

check_rescaled() {
  local out=$work/rescaled methods=rescaled-asgd,asgd,delay-adaptive-asgd,ringmaster,rennala,malenia,ringleader
  local common=(--methods "$methods" --baseline rescaled-asgd --seeds 2 --tune optimizer.lr=0.03,0.3
    --tune-seeds 1 --budget time=1500 --set eval_every=0)
  local c=$root/configs/quadratic-centers.toml
  (cd "$root" && for timing in fixed exponential; do
    for part in mlp quadratic; do
      "$pacer" -q compare "$c" "${common[@]}" --set timing.model=$timing \
        --out "$out/pacer/$part-$timing" >/dev/null
    done
  done)
  # The second regime's folders: the same runs (what is tested is the judging of both).
  mkdir -p "$out/noise-free"
  cp -r "$out/pacer/mlp-fixed" "$out/pacer/mlp-exponential" "$out/noise-free/"
  "$pacer" claims "$root/configs/claims/rescaled.toml" "$out" --mode quick --command test \
    >"$work/rescaled.txt" || { fail "pacer claims failed: $(tail -3 "$work/rescaled.txt")"; return; }
  local csv=$out/claims.csv claim
  for claim in "1" "1 (MLP)" 2 3; do
    [ -n "$(verdict_of "$csv" "$claim" pacer)" ] || fail "claim $claim not judged"
  done
  # With fixed times the closed-form problem is deterministic: ASGD ends at argmin F̃ and Rescaled
  # ASGD at argmin F (the paper's claim, and the tests of tests/engine/async_sim_test.cc).
  [ "$(case_outcome "$csv" "quadratic-fixed · asgd" "ASGD within 0.2635 of argmin F̃")" = holds ] ||
    fail "ASGD not at argmin F̃: $(grep -F 'quadratic-fixed · asgd' "$csv")"
  [ "$(case_outcome "$csv" "quadratic-fixed · rescaled-asgd" "Rescaled ASGD within 0.2635 of argmin F")" = holds ] ||
    fail "Rescaled ASGD not at argmin F: $(grep -F 'quadratic-fixed · rescaled-asgd' "$csv")"
  expect_line "$out/report.md" 'competitive' "claim 2 in report.md"
}

case "$check" in
  pgc) check_pgc ;;
  rescaled) check_rescaled ;;
  *) echo "reports_test.sh: unknown check '$check'" >&2; exit 2 ;;
esac
[ "$failures" = 0 ] || { echo "$failures failure(s)" >&2; exit 1; }
echo "reports.$check: passed"
