#!/usr/bin/env python3
"""Compare the SASS of two cuobjdump -sass dumps function by function: instruction counts, and
whether the bodies are identical once the .FTZ modifier is removed (simt kernels only)."""
import re, sys
def funcs(path):
    out, name = {}, None
    for line in open(path, errors="replace"):
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            name = m.group(1); out[name] = []; continue
        m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(.*?);", line)
        if name and m:
            out[name].append(m.group(1).strip())
    return out
a, b = funcs(sys.argv[1]), funcs(sys.argv[2])
for n in sorted(a):
    if "simt" not in n and "_cu_" not in n: continue
    if not re.search(r"_(0[1-9]|1[0-5])_[a-z0-9_]+_cu_", n): continue
    x, y = a[n], b.get(n, [])
    same = [i.replace(".FTZ", "") for i in x] == [i.replace(".FTZ", "") for i in y]
    ftz = sum(".FTZ" in i for i in y)
    short = re.search(r"_((0[1-9]|1[0-5])_[a-z0-9_]+?)_cu_", n).group(1)
    print(f"{short:45s} normal {len(x):5d} instr, fast-math {len(y):5d} instr, {ftz:5d} with .FTZ, identical apart from .FTZ: {same}")
