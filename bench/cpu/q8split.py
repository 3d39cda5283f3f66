#!/usr/bin/env python3
# Reorders a whisper.cpp q8_0 model's blocks (per q8_0 tensor: all f16 scales, then all int8 quants) so xz
# compresses it better; "join" restores the exact file.  usage: q8split.py split|join IN OUT
import struct, sys
def tensors(b):
    # header: magic, 11 hparams, mel (n_mel, n_fft, floats), vocab (n, [len, bytes]...), then tensors
    o = 4 + 11 * 4
    nmel, nfft = struct.unpack_from('<ii', b, o); o += 8 + 4 * nmel * nfft
    (nv,) = struct.unpack_from('<i', b, o); o += 4
    for _ in range(nv):
        (l,) = struct.unpack_from('<i', b, o); o += 4 + l
    while o < len(b):
        nd, nl, tt = struct.unpack_from('<iii', b, o); o += 12
        dims = struct.unpack_from('<%di' % nd, b, o); o += 4 * nd
        o += nl
        n = 1
        for d in dims: n *= d
        size = {0: 4 * n, 1: 2 * n, 8: n // 32 * 34}[tt]
        yield tt, o, size
        o += size
def main():
    mode, src, dst = sys.argv[1:]
    b = bytearray(open(src, 'rb').read())
    for tt, o, size in tensors(bytes(b)):
        if tt != 8: continue
        nb = size // 34
        blk = b[o:o + size]
        if mode == 'split':
            sc = b''.join(blk[i*34:i*34+2] for i in range(nb)); q = b''.join(blk[i*34+2:i*34+34] for i in range(nb))
            b[o:o + size] = sc + q
        else:
            sc, q = blk[:2*nb], blk[2*nb:]
            b[o:o + size] = b''.join(sc[2*i:2*i+2] + q[32*i:32*i+32] for i in range(nb))
    open(dst, 'wb').write(b)
main()
