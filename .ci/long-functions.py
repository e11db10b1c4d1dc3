#!/usr/bin/env python3
"""Functions longer than N lines (signature to closing brace). Usage: .ci/long-functions.py src/engine 100"""
import os, re, sys
root = sys.argv[1]; limit = int(sys.argv[2]) if len(sys.argv) > 2 else 100
def strip(line):
    line = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    line = re.sub(r"'(\\.|[^'\\])'", "''", line)
    return line.split("//")[0]
out = []
for d, _, fs in os.walk(root):
    for f in fs:
        if not f.endswith(".rs"): continue
        p = os.path.join(d, f)
        lines = open(p).read().split("\n")
        test_from = next((i for i, l in enumerate(lines) if l.startswith("#[cfg(test)]")), len(lines))
        i = 0
        while i < len(lines):
            m = re.match(r"\s*(pub(\([^)]*\))?\s+)?(const\s+)?(unsafe\s+)?(extern\s+\"C\"\s+)?fn\s+(\w+)", lines[i])
            if m:
                depth = 0; started = False; j = i
                while j < len(lines):
                    t = strip(lines[j])
                    if not started and ";" in t and "{" not in t: break
                    for ch in t:
                        if ch == "{": depth += 1; started = True
                        elif ch == "}": depth -= 1
                    if started and depth == 0: break
                    j += 1
                n = j - i + 1
                if started and n > limit:
                    out.append((n, f"{p}:{i+1}", m.group(6), "test" if i > test_from else ""))
            i += 1
for n, loc, name, t in sorted(out, reverse=True):
    print(f"{n:5} {name:40} {loc} {t}")
