#!/usr/bin/env python3
"""The structure of the workspace, as issue 35 measures it (read-only, by the source's text):

  scripts/structure.py [ROOT] [all|size|cycles]   per crate: the longest function outside
                                                   #[cfg(test)] modules (whole lines, comments
                                                   included), how many exceed 100 lines, the
                                                   largest file; then the import circles inside
                                                   each crate (`crate::`/`super::`/`self::` paths
                                                   between modules, parents and children aside)
  scripts/structure.py ROOT long CRATE [LINES]     the functions of CRATE longer than LINES (80)
"""
import os, re, sys, collections
root = sys.argv[1] if len(sys.argv) > 1 else '.'
mode = sys.argv[2] if len(sys.argv) > 2 else 'all'

def strip(text):
    # blank out strings, chars and comments keeping line structure
    out = []; i = 0; n = len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i); j = n if j < 0 else j
            out.append(' ' * (j - i)); i = j; continue
        if text.startswith('/*', i):
            depth = 0; j = i
            while j < n:
                if text.startswith('/*', j): depth += 1; j += 2; continue
                if text.startswith('*/', j):
                    depth -= 1; j += 2
                    if depth == 0: break
                    continue
                j += 1
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j; continue
        m = re.match(r'(b?r)(#*)"', text[i:i+20])
        if m and (i == 0 or not (text[i-1].isalnum() or text[i-1] == '_')):
            hashes = m.group(2); end = '"' + hashes
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j; continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == '\\' else 1
            j += 1
            out.append(re.sub(r'[^\n]', ' ', text[i:j])); i = j; continue
        if c == "'":
            m = re.match(r"'(\\.|\\u\{[0-9a-fA-F]+\}|\\x..|[^\\'])'", text[i:i+12])
            if m:
                out.append(' ' * len(m.group(0))); i += len(m.group(0)); continue
        out.append(c); i += 1
    return ''.join(out)

def match_brace(s, i):
    d = 0
    for j in range(i, len(s)):
        if s[j] == '{': d += 1
        elif s[j] == '}':
            d -= 1
            if d == 0: return j
    return len(s) - 1

def test_ranges(s):
    rs = []
    for m in re.finditer(r'#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{', s):
        b = m.end() - 1
        rs.append((m.start(), match_brace(s, b)))
    return rs

def fns(path):
    text = open(path, encoding='utf-8').read()
    s = strip(text)
    tr = test_ranges(s)
    res = []
    for m in re.finditer(r'\bfn\s+(\w+)', s):
        if any(a <= m.start() <= b for a, b in tr): continue
        # find body start: first '{' or ';' at paren depth 0 after signature
        j = m.end(); d = 0
        while j < len(s):
            ch = s[j]
            if ch in '(<[': d += 1
            elif ch in ')>]': d -= 1
            elif ch == ';' and d <= 0: j = -1; break
            elif ch == '{' and d <= 0: break
            j += 1
        if j < 0 or j >= len(s): continue
        e = match_brace(s, j)
        start_line = s.count('\n', 0, m.start()) + 1
        end_line = s.count('\n', 0, e) + 1
        res.append((end_line - start_line + 1, m.group(1), start_line))
    return res, text.count('\n')

def crate_files(crate):
    src = os.path.join(root, 'crates', crate, 'src')
    for dp, dn, fn in os.walk(src):
        for f in fn:
            if f.endswith('.rs'): yield os.path.join(dp, f)

crates = sorted(os.listdir(os.path.join(root, 'crates')))
if mode in ('all', 'size'):
    for c in crates:
        best = (0, '', '', 0); big = (0, ''); over = 0
        for p in crate_files(c):
            fs, lines = fns(p)
            rel = os.path.relpath(p, os.path.join(root, 'crates', c, 'src'))
            if lines > big[0]: big = (lines, rel)
            for l, name, ln in fs:
                if l > 100: over += 1
                if l > best[0]: best = (l, name, rel, ln)
        print(f"{c:9} longest fn {best[0]:4} {best[2]}:{best[3]} {best[1]:30} | >100: {over:2} | largest file {big[0]:5} {big[1]}")
if mode == 'long':
    c = sys.argv[3]
    out = []
    for p in crate_files(c):
        fs, _ = fns(p)
        for l, name, ln in fs:
            if l > int(sys.argv[4] if len(sys.argv) > 4 else 80): out.append((l, name, os.path.relpath(p, root), ln))
    for o in sorted(out, reverse=True): print(*o)

# import circles
def modpath(crate_src, p):
    rel = os.path.relpath(p, crate_src)[:-3].split(os.sep)
    if rel[-1] in ('mod', 'lib', 'main'): rel = rel[:-1]
    return tuple(rel)

if mode in ('all', 'cycles'):
    for c in crates:
        src = os.path.join(root, 'crates', c, 'src')
        files = list(crate_files(c))
        mods = {modpath(src, p): p for p in files}
        g = collections.defaultdict(set)
        for m, p in mods.items():
            s = strip(open(p, encoding='utf-8').read())
            for tr in test_ranges(s)[::-1]:
                s = s[:tr[0]] + s[tr[1]+1:]
            # collect paths from use statements and inline crate::/super:: paths
            for um in re.finditer(r'\b(crate|super|self)((?:::\s*\w+)+)', s):
                base = um.group(1); parts = [x.strip() for x in um.group(2).split('::') if x.strip()]
                if base == 'crate': cur = []
                elif base == 'super':
                    cur = list(m[:-1]) if not mods.get(m, '').endswith(('mod.rs','lib.rs')) else list(m[:-1])
                    # super from file foo.rs (module m) is parent of m
                    cur = list(m[:-1])
                    while parts and parts[0] == 'super': parts.pop(0); cur = cur[:-1]
                else: cur = list(m)
                # longest prefix that is a module
                target = None
                path = cur[:]
                for part in parts:
                    path = path + [part]
                    if tuple(path) in mods: target = tuple(path)
                    else: break
                if target is None: continue
                if target != m and not (len(target) < len(m) and m[:len(target)] == target) and not (len(m) < len(target) and target[:len(m)] == m):
                    g[m].add(target)
        # SCCs (Tarjan)
        idx = {}; low = {}; st = []; on = set(); sccs = []; k = [0]
        sys.setrecursionlimit(10000)
        def sc(v):
            idx[v] = low[v] = k[0]; k[0] += 1; st.append(v); on.add(v)
            for w in g[v]:
                if w not in idx: sc(w); low[v] = min(low[v], low[w])
                elif w in on: low[v] = min(low[v], idx[w])
            if low[v] == idx[v]:
                comp = []
                while True:
                    w = st.pop(); on.discard(w); comp.append(w)
                    if w == v: break
                if len(comp) > 1: sccs.append(comp)
        for v in list(mods):
            if v not in idx: sc(v)
        for comp in sccs:
            print(f"cycle {c}: " + ', '.join('::'.join(x) or 'lib' for x in sorted(comp)))
