#!/usr/bin/python3
"""Size limits of the source tree, run by CTest (`ctest -R style.size`).

Checks every .cc and .h file under the given folders (default: src and tools):
  * a file has at most 800 lines;
  * a function body has at most 80 lines, unless the line just above the function's first line
    (its signature) is a comment that starts with `// Long:` and says why.
Prints one line per violation (file:line: what) and exits 1 if there is any, 0 otherwise.

Functions are found by matching braces outside comments, string and character literals: a `{`
opens a function body when the text since the previous `;`, `{` or `}` ends like a function
head (a closing parenthesis, optionally followed by qualifiers, a trailing return type or a
constructor's initializer list) and is not a control statement (`if`, `for`, `while`, `switch`,
`catch`) or a lambda inside another function (a lambda counts toward the function it is in).
Usage: scripts/check-size.py [--max-file N] [--max-function N] [DIR ...]
"""
import os
import re
import sys

MAX_FILE = 800
MAX_FUNCTION = 80
WAIVER = re.compile(r"^\s*//\s*Long:\s*\S")
CONTROL = re.compile(r"\b(if|for|while|switch|catch|do|else)\s*(\(|$)")
HEAD_END = re.compile(
    r"\)\s*(const|override|final|noexcept(\([^)]*\))?|mutable|&|&&|\s)*"
    r"(->\s*[\w:<>,\s*&]+)?\s*$")


def strip_code(text):
    """The text with comments and literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = ")" + m.group(1) + '"'
            j = text.find(end, i)
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            if c == "'" and i > 0 and (text[i - 1].isalnum()):  # digit separator 1'000
                out.append(" ")
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(n, j + 1)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def initializer_list_head(head):
    """A constructor's `Name(args) : a_(x), b_{y}` ends in ')' or '}' after a ':' member list."""
    m = re.search(r"\)\s*(noexcept\s*)?:\s*[\w:]+\s*[({]", head)
    return m is not None


def functions(code):
    """(start_line, end_line) of every outermost function body in stripped code."""
    found = []
    stack = []  # per open brace: 'fn', 'scope' (namespace/class/...), or 'inner'
    last = 0  # index after the previous ';', '{' or '}'
    line = 1
    start_line = {}
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
        elif c == ";":
            last = i + 1
        elif c == "{":
            head = code[last:i]
            in_function = "fn" in stack
            if in_function:
                kind = "inner"
            else:
                flat = " ".join(head.split())
                is_head = bool(HEAD_END.search(flat)) or initializer_list_head(flat)
                if is_head and not CONTROL.search(flat.split(")")[0] + ")"):
                    kind = "fn"
                else:
                    kind = "scope"
            if kind == "fn":
                # The function's first line: the first non-blank line of its head.
                offset = len(head) - len(head.lstrip())
                start_line[len(stack)] = code.count("\n", 0, last + offset) + 1
            stack.append(kind)
            last = i + 1
        elif c == "}":
            if stack:
                kind = stack.pop()
                if kind == "fn":
                    found.append((start_line[len(stack)], line))
            last = i + 1
    return found


def check_file(path, max_file, max_function):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    problems = []
    count = len(lines) - (1 if text.endswith("\n") else 0)
    if count > max_file:
        problems.append(f"{path}:1: {count} lines (at most {max_file})")
    for first, last in functions(strip_code(text)):
        length = last - first + 1
        if length <= max_function:
            continue
        above = lines[first - 2] if first >= 2 else ""
        if WAIVER.match(above):
            continue
        problems.append(
            f"{path}:{first}: function of {length} lines (at most {max_function} without a "
            f"'// Long: why' comment on the line above it)")
    return problems


def main(argv):
    max_file, max_function, dirs = MAX_FILE, MAX_FUNCTION, []
    args = iter(argv)
    for a in args:
        if a == "--max-file":
            max_file = int(next(args))
        elif a == "--max-function":
            max_function = int(next(args))
        else:
            dirs.append(a)
    dirs = dirs or ["src", "tools"]
    problems = []
    for d in dirs:
        if not os.path.isdir(d):
            print(f"check-size: {d}: not a folder", file=sys.stderr)
            return 2
        for root, _, files in os.walk(d):
            for name in sorted(files):
                if name.endswith((".cc", ".h")):
                    problems += check_file(os.path.join(root, name), max_file, max_function)
    for p in sorted(problems):
        print(p)
    if problems:
        print(f"check-size: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
