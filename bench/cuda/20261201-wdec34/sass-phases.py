#!/usr/bin/env python3
"""Warp-stall samples of the first kernel in an `ncu --page source --print-source sass --csv` export, summed over
the phases of attention_ticket_f32 (cut points: SASS offsets from the entry in this build, main 78e82cd's PTX through the
driver 580.159.04's ptxas, read off the listing). Usage: sass-phases.py cross-sass.csv"""
import csv, sys
rows, hdr, started = [], None, 0
for l in csv.reader(open(sys.argv[1])):
    if l and l[0] == "Kernel Name":
        started += 1
        if started > 1:
            break
        continue
    if l and l[0] == "Address":
        hdr = {h: i for i, h in enumerate(l)}
        continue
    if hdr and len(l) > 5:
        rows.append(l)
base = int(rows[0][0], 16)
S = lambda r: int(r[hdr["Warp Stall Sampling (All Samples)"]] or 0)
E = lambda r: int(r[hdr["Instructions Executed"]] or 0)
cuts = [(0x0000, "entry: Args to shared memory, bindings, barrier"), (0x2340, "attention_impl set-up (Args loads, divisions)"),
        (0x2de0, "q.k: 64 K floats a lane and q, LD.E.32 each, in 6 groups each waited out"),
        (0x3e60, "online softmax: simd max/sum (shuffles), exp in double"),
        (0x9960, "values: 4 batches of 8 keys"), (0xb430, "partial (max, sum, acc) stores"),
        (0x14140, "ticket: fence, atomic, verdict barrier"), (0x14390, "merge (the last chunk's warp only)")]
tot = sum(S(r) for r in rows)
print(f"{sum(E(r) for r in rows)} warp instructions executed, {tot} stall samples")
for i, (off, name) in enumerate(cuts):
    hi = cuts[i + 1][0] if i + 1 < len(cuts) else 1 << 40
    s = sum(S(r) for r in rows if off <= int(r[0], 16) - base < hi)
    print(f"{s:5d} {100 * s / tot:5.1f}%  {name}")
