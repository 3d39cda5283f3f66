"""Writes a training checkpoint (train.py's --ckpt) from a whisper.cpp file that export() wrote, so that a new
training run continues from a committed model (testdata/speechkit/ggml-speechkit-q8_0.bin) instead of from scratch
when the run's own checkpoint is gone. The weights are the file's (q8_0 dequantized), the auxiliary CTC head is new
(it is not exported), the token-embedding rows left at the kit's pattern (frozen_row) stay frozen, and the schedule
starts afresh: step 0, no seconds trained, --total planned (train.py warms up again from --lr).

  python3 seed.py --model ../../testdata/speechkit/ggml-speechkit-q8_0.bin --total 1300 --out /tmp/sk/ckpt.pt
"""
import argparse

import numpy as np
import torch
from torch import nn

from ggmlfile import load
from model import Whisper, frozen_row
from examples import NCTC


def seeded(path, total, seed=39):
    dims, sd = load(path)
    model = Whisper(dims)
    missing = set(model.state_dict()) - set(sd)
    extra = set(sd) - set(model.state_dict())
    if missing or extra:
        raise ValueError(f"{path}: tensors missing {sorted(missing)}, unexpected {sorted(extra)}")
    model.load_state_dict({k: torch.from_numpy(v) for k, v in sd.items()})
    torch.manual_seed(seed)
    ctc = nn.Linear(dims["n_audio_state"], NCTC)
    emb = model.decoder.token_embedding.weight.detach()
    # a row still at the kit's pattern was never trained: within q8_0's rounding of it
    used = torch.tensor([not torch.allclose(emb[r], frozen_row(r, emb.shape[1]), rtol=0, atol=2e-2)
                         for r in range(emb.shape[0])])
    meta = {"dims": dims, "used": used, "train_seconds": 0.0, "step": 0, "calls": 0, "total": float(total)}
    return dict(meta, model={k: v if k == "encoder.positional_embedding" else v.half()
                             for k, v in model.state_dict().items()},
                ctc={k: v.half() for k, v in ctc.state_dict().items()}), model


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", required=True, help="a whisper.cpp file export() wrote (f16 or q8_0)")
    ap.add_argument("--total", type=float, required=True, help="training seconds planned over the new run's calls")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    ck, _ = seeded(a.model, a.total)
    torch.save(ck, a.out)
    print(f"{a.out}: dims {ck['dims']}, {int(ck['used'].sum())} trained token rows of {len(ck['used'])}, "
          f"total {a.total:.0f} s")


if __name__ == "__main__":
    main()
