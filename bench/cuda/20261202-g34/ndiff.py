# Applies a normal-format diff (`diff OLD NEW > D`) to OLD, writing NEW: python3 ndiff.py OLD D NEW. Carries a
# kernel variant's PTX as its difference from the binary's (0.3 MB instead of 2.8: the transfer is 64 MiB).
import re, sys
old = open(sys.argv[1]).read().split('\n')
out, i = [], 0  # i: next old line (0-based) not yet copied
cmd = re.compile(r'^(\d+)(?:,(\d+))?([acd])(\d+)(?:,(\d+))?$')
for line in open(sys.argv[2]).read().split('\n'):
    m = cmd.match(line)
    if m:
        a1 = int(m.group(1)); a2 = int(m.group(2) or a1); op = m.group(3)
        keep = a1 if op == 'a' else a1 - 1  # old lines before the hunk
        out.extend(old[i:keep]); i = keep if op == 'a' else a2
    elif line.startswith('> '):
        out.append(line[2:])
out.extend(old[i:])
open(sys.argv[3], 'w').write('\n'.join(out))
