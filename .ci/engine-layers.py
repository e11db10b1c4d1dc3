#!/usr/bin/env python3
"""File-level import graph of src/engine and its circles (strongly connected components).

Usage: .ci/engine-layers.py src [files|layers]   files: file graph, a parent module's own submodules
not counted; layers: the top-level modules of the engine."""
import os, re, sys
from collections import defaultdict
ROOT = sys.argv[1] if len(sys.argv) > 1 else "src"
ENG = os.path.join(ROOT, "engine")
files = {}
for d, _, fs in os.walk(ENG):
    for f in fs:
        if f.endswith(".rs"):
            p = os.path.join(d, f)
            rel = os.path.relpath(p, ROOT)[:-3]
            parts = rel.split(os.sep)
            if parts[-1] == "mod":
                parts = parts[:-1]
            files[tuple(["crate"] + parts)] = os.path.relpath(p, ROOT)
def strip_comments(t):
    t = re.sub(r"//[^\n]*", "", t)
    t = re.sub(r"/\*.*?\*/", "", t, flags=re.S)
    t = re.sub(r'"(\\.|[^"\\])*"', '""', t)
    return t
def expand(tree):
    # expand a use tree "a::{b, c::{d, e}}" into paths
    tree = tree.strip()
    i = tree.find("{")
    if i < 0:
        return [tree.split(" as ")[0].strip()]
    prefix = tree[:i]
    body = tree[i+1:tree.rfind("}")]
    items, depth, cur = [], 0, ""
    for ch in body:
        if ch == "{": depth += 1
        if ch == "}": depth -= 1
        if ch == "," and depth == 0:
            items.append(cur); cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for it in items:
        if it.strip():
            for e in expand(it):
                out.append(prefix + e if e != "self" else prefix.rstrip(":"))
    return out
def resolve(mod, path):
    segs = [s for s in path.split("::") if s]
    if not segs: return None
    if segs[0] == "crate": cur = ["crate"]; segs = segs[1:]
    elif segs[0] in ("super", "self"):
        cur = list(mod)
        while segs and segs[0] in ("super", "self"):
            if segs[0] == "super": cur = cur[:-1]
            segs = segs[1:]
    elif tuple(list(mod) + [segs[0]]) in files:
        cur = list(mod)
    else:
        return None
    full = cur + segs
    best = None
    for n in range(len(full), 0, -1):
        if tuple(full[:n]) in files:
            best = tuple(full[:n]); break
    return best
reexports = {}
for mod, path in files.items():
    t = strip_comments(open(os.path.join(ROOT, path)).read())
    for m in re.finditer(r"\bpub(?:\([^)]*\))?\s+use\s+([^;]+);", t):
        for p in expand(m.group(1)):
            name = p.split("::")[-1]
            reexports[(mod, name)] = p
def resolve_full(mod, path, depth=0):
    """`resolve`, then through a `pub use` re-export of the module it lands on."""
    r = resolve(mod, path)
    if r is None or depth > 5:
        return r
    for segment in [x for x in path.split("::") if x]:
        if (r, segment) in reexports:
            return resolve_full(r, reexports[(r, segment)], depth + 1) or r
    return r
edges = defaultdict(set)
for mod, path in files.items():
    t = strip_comments(open(os.path.join(ROOT, path)).read())
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", t):
        paths += expand(m.group(1))
    paths += re.findall(r"(?<![:\w])(?:\w+)(?:::\w+)+", t)
    for p in paths:
        r = resolve_full(mod, p.replace(" ", "").replace("\n", ""))
        if r and r != mod and r in files:
            edges[mod].add(r)
MODE = sys.argv[2] if len(sys.argv) > 2 else "files"
if MODE == "layers":
    def top(m):
        return m[:3] if len(m) >= 3 else None
    ledges = defaultdict(set)
    lfiles = {}
    for v in list(files):
        if top(v): lfiles[top(v)] = "/".join(top(v)[1:])
    for v, ws in list(edges.items()):
        for w in ws:
            if top(v) and top(w) and top(v) != top(w):
                ledges[top(v)].add(top(w))
    files = lfiles; edges = ledges
elif MODE == "files":
    for v in list(edges):
        edges[v] = {w for w in edges[v] if w[:len(v)] != v and v[:len(w)] != w}
# Tarjan
idx, low, st, on, sccs, c = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        sccs.append(comp)
for v in files:
    if v not in idx: sc(v)
big = sorted([s for s in sccs if len(s) > 1], key=len, reverse=True)
print(f"{len(big)} circles")
for s in big:
    print(f"\n{len(s)} files:")
    for v in sorted(s): print("   ", files[v], "->", ", ".join(sorted(files[w] for w in edges[v] if w in s)))
