#!/usr/bin/env bash
# Tests of scripts/check-size.py on fixtures it must accept and reject, then the tree itself.
# Usage: check_size_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src=$1
work=$2/check-size
rm -rf "$work" && mkdir -p "$work/ok" "$work/long_function" "$work/long_file" "$work/waived"
check=("$src/scripts/check-size.py")
fail() { echo "FAIL: $*"; exit 1; }

# A body of n statement lines inside `int f() { ... }`, with braces, strings and comments that
# must not confuse the brace matching.
function_of() {
  local name=$1 n=$2
  echo "int $name(int x) {"
  echo '  const char* s = "}}}";  // }'
  for ((i = 0; i < n - 4; i++)); do echo "  if (x > $i) { x += '}'; }"; done
  echo "  return x;"
  echo "}"
}
{ echo "namespace a {"; echo "struct S {"; function_of g 80 | sed 's/^/  /'; echo "};"
  function_of f 80; echo "}  // namespace a"; } > "$work/ok/ok.cc"
function_of f 81 > "$work/long_function/f.cc"
{ echo "// Long: a table of cases that reads best in one place."; function_of f 120; } \
  > "$work/waived/f.cc"
for ((i = 0; i < 801; i++)); do echo "int v$i = $i;"; done > "$work/long_file/big.h"

"${check[@]}" "$work/ok" || fail "80-line functions were rejected"
"${check[@]}" "$work/waived" || fail "a waived long function was rejected"
out=$("${check[@]}" "$work/long_function" 2>&1) && fail "an 81-line function was accepted"
grep -q "f.cc:1: function of 81 lines" <<<"$out" || fail "unexpected report: $out"
out=$("${check[@]}" "$work/long_file" 2>&1) && fail "an 801-line file was accepted"
grep -q "big.h:1: 801 lines" <<<"$out" || fail "unexpected report: $out"

# The tree: every file under src/ and tools/ within the limits.
cd "$src" && "${check[@]}" src tools
echo "check-size: fixtures and tree OK"
