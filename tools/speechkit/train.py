"""speechkit: render, train, export and evaluate the synthetic-voice test model.

One resumable script for the GPU machine (PyTorch, numpy, scipy, tiktoken; no
openai-whisper package is needed). Each call renders the corpus into --cache
(reused when complete: a warm machine's next call skips it), resumes from
--state (fp32 weights and the optimizer, kept on the machine) or else --ckpt
(fp16 weights), trains until --stop-at minus --reserve seconds, then writes
the checkpoint, the whisper.cpp files and the evaluation. The learning rate
and the curriculum follow the fraction of --total (planned training seconds
over all calls, stored in the checkpoint), so calls continue one schedule.

  python3 train.py --kit DIR --espeak DIR --corpus DIR --eval-pcm FILE \
      --ckpt FILE --state FILE --out DIR --cache DIR --total 1350 [--stop-at 550]

The pieces, one a file: tok.py (tokenizer), model.py (Whisper), mel.py
(log-mel), render.py (espeak-ng), curriculum.py, examples.py (training
windows), augment.py, ggmlfile.py (whisper.cpp's file), evaluate.py.

DIR layout: --kit holds gpt2.tiktoken and mel_filters.npz (the kit's assets);
--espeak the extracted espeak-ng packages (usr/bin/espeak-ng ...); --corpus
train.jsonl and eval.jsonl from corpus.py; --eval-pcm the evaluation passage
(s16le mono 16 kHz, eval.json gives each sentence's samples).
"""
import argparse
import json
import math
import os
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from augment import augment, specaugment
from curriculum import mix
from evaluate import clip_mel, evaluate, long_windows, quick_wer
from examples import NCTC, Data, Examples, build_batch
from ggmlfile import export
from mel import HOP, SR, Mel
from model import DIMS, Whisper, frozen_row, sinusoids
from render import render_all
from tok import EOT, NVOCAB, Tok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kit", required=True)
    ap.add_argument("--espeak", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--eval-pcm", required=True)
    ap.add_argument("--ckpt", required=True, help="resumed from if it exists (fp16 weights)")
    ap.add_argument("--state", default="", help="full training state (fp32 weights, optimizer), resumed from "
                    "before --ckpt when it exists and is as far; kept on the machine between calls")
    ap.add_argument("--out", required=True)
    ap.add_argument("--total", type=float, required=True,
                    help="planned training seconds over all calls: the learning-rate schedule and the "
                         "curriculum run over it (stored in the checkpoint; a resumed call keeps the stored one)")
    ap.add_argument("--stop-at", type=float, default=540, help="seconds after start when training stops")
    ap.add_argument("--reserve", type=float, default=70, help="seconds kept for export and evaluation")
    ap.add_argument("--lr", type=float, default=1.5e-3)
    ap.add_argument("--progress-start", type=float, default=0.0,
                    help="the curriculum's progress never below this (0..1; the learning rate still follows "
                         "the schedule): a run from a trained model (seed.py) starts on the full mix at 0.4 "
                         "instead of relearning clean single utterances")
    ap.add_argument("--ctc", type=float, default=0.3, help="weight of the encoder's auxiliary CTC loss")
    ap.add_argument("--copies", type=int, default=1, help="renderings of each sentence, each in a random voice")
    ap.add_argument("--specaug", type=int, default=1, help="time and frequency masks on the mel (0: off)")
    ap.add_argument("--term-weight", type=float, default=2.0,
                    help="loss weight of windows whose glossary prompt holds a term they speak")
    ap.add_argument("--batch", type=int, default=192)
    ap.add_argument("--limit", type=int, default=0, help="use only this many sentences (smoke tests)")
    ap.add_argument("--seed", type=int, default=39)
    ap.add_argument("--procs", type=int, default=16)
    ap.add_argument("--workers", type=int, default=8, help="processes making examples")
    ap.add_argument("--dims", default="", help="json overrides of DIMS (smoke tests)")
    ap.add_argument("--cache", required=True, help="rendered audio shards (reused when complete)")
    ap.add_argument("--eval-limit", type=int, default=0, help="evaluate only this many sentences (smoke tests)")
    ap.add_argument("--watch", type=float, default=120, help="seconds between quick WER checks")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    logf = open(os.path.join(a.out, "train.log"), "a")
    t_start = time.time()

    def log(s):
        line = f"[{time.time() - t_start:7.1f}s] {s}"
        print(line, flush=True)
        logf.write(line + "\n")
        logf.flush()

    tok = Tok(os.path.join(a.kit, "gpt2.tiktoken"))
    filters = os.path.join(a.kit, "mel_filters.npz")
    items = [json.loads(l) for l in open(os.path.join(a.corpus, "train.jsonl"))]
    if a.limit:
        items = items[:a.limit]
    ev = json.load(open(os.path.join(a.corpus, "eval.json")))["sentences"]
    if a.eval_limit:
        ev = ev[:a.eval_limit]
    vocab_terms = [l.split("=")[0].strip() for l in open(os.path.join(a.corpus, "vocabulary.txt")) if "=" in l]
    t0 = time.time()
    audio, lens, starts, owner = render_all(a.espeak, items, a.seed, a.copies, a.procs, a.cache)
    log(f"rendered {len(lens)} utterances, {len(audio) / SR / 3600:.1f} h, in {time.time() - t0:.0f}s")
    data = Data(items, lens, starts, owner, tok, vocab_terms)
    state = torch.load(a.state, map_location="cpu", weights_only=False) if a.state and os.path.exists(a.state) else None
    ckpt = torch.load(a.ckpt, map_location="cpu", weights_only=False) if os.path.exists(a.ckpt) else None
    if state and ckpt and ckpt["step"] > state["step"]:
        state = None
    src = state or ckpt
    call = src["calls"] if src else 0
    # Forked before this process touches CUDA.
    batches = Examples(data, a.seed * 7919 + call, a.batch, a.workers)

    device = "cuda" if torch.cuda.is_available() else "cpu"
    log(f"torch {torch.__version__} numpy {np.__version__} device {device} "
        f"{torch.cuda.get_device_name() if device == 'cuda' else ''}")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    audio_gpu = torch.from_numpy(audio).to(device)

    dims = dict(DIMS, **json.loads(a.dims or "{}"))
    if src:
        dims = src["dims"]
    torch.manual_seed(a.seed)
    model = Whisper(dims).to(device)
    ctc_head = nn.Linear(dims["n_audio_state"], NCTC).to(device)  # training only: not exported
    used = torch.zeros(NVOCAB, dtype=torch.bool)
    used[list(data.used_tokens)] = True
    used[EOT:] = True
    with torch.no_grad():
        nn.init.normal_(model.decoder.positional_embedding, std=0.01)
        emb = model.decoder.token_embedding.weight
        nn.init.normal_(emb, std=0.02)
        for r in torch.nonzero(~used).flatten().tolist():
            emb[r] = frozen_row(r, emb.shape[1])
    total = a.total
    if src:
        model.load_state_dict({k: v.float() for k, v in src["model"].items()})
        ctc_head.load_state_dict({k: v.float() for k, v in src["ctc"].items()})
        if src["model"]["encoder.positional_embedding"].dtype == torch.float16:  # older checkpoints rounded them
            model.encoder.positional_embedding.copy_(sinusoids(*model.encoder.positional_embedding.shape).to(device))
        # rows the corpus now uses (the made-up terms' spellings) train too; the rest stay frozen
        used, total = src["used"] | used, src["total"]
        log(f"resumed from the {'state' if state else 'checkpoint'}: call {call}, "
            f"{src['train_seconds']:.0f} s of {total:.0f} trained, step {src['step']}")
    frozen = (~used).to(device)
    model.decoder.token_embedding.weight.register_hook(lambda g: g.masked_fill(frozen[:, None], 0))
    params = list(model.named_parameters()) + [("ctc." + n, p) for n, p in ctc_head.named_parameters()]
    decay = [p for n, p in params if p.ndim >= 2 and "embedding" not in n]
    other = [p for n, p in params if not (p.ndim >= 2 and "embedding" not in n)]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01}, {"params": other, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.98), eps=1e-8)
    if state:
        opt.load_state_dict(state["opt"])
    melf = Mel(filters, device)
    trained = src["train_seconds"] if src else 0.0
    step = src["step"] if src else 0
    budget = max(0.0, a.stop_at - a.reserve - (time.time() - t_start))
    # One schedule over all calls: warm-up over the first 300 steps (100 again when the
    # optimizer's moments were lost with the machine), then a cosine from --lr to 2 %
    # over the planned total of training seconds.
    peak = a.lr
    warm0, warm = (0, 300) if not src else ((step, 100) if not state else (0, 0))
    g = torch.Generator(device=device)
    g.manual_seed(a.seed + call)
    sup = tok.non_speech()
    pcm = np.fromfile(a.eval_pcm, dtype="<i2")
    watch_ev = [(clip_mel(melf, torch.from_numpy(pcm[e["start"]:e["end"]].astype(np.float32) / 32768).to(device),
                          device), e["spoken"]) for e in ev[::max(1, len(ev) // 40)][:40]]
    train_ids = data.utts[:a.eval_limit or 50]  # clean renderings of sentences the model trains on

    def train_clip(u):
        o, n = int(data.off[u]), int(data.len[u])
        return clip_mel(melf, audio_gpu[o:o + n].float() / 32768, device), data.items[data.owner[u]]["spoken"]

    watch_tr = [train_clip(u) for u in train_ids]
    watch_long = [(clip_mel(melf, torch.from_numpy(x).to(device), device), ref) for x, ref in long_windows(ev, pcm)]
    log(f"training for {budget:.0f} s (schedule over {total:.0f} s, batch {a.batch}, dims {json.dumps(dims)}"
        + (f", curriculum from progress {a.progress_start:.2f}" if a.progress_start else "") + ")")
    t_train, local, last_watch = time.time(), 0, time.time()
    t_last = t_train
    losses, ctcs, t_wait = [], [], 0.0
    while time.time() - t_train < budget:
        p = min(1.0, (trained + time.time() - t_train) / max(total, 1e-6))
        lr = peak * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * p)))
        if warm and step - warm0 < warm:
            lr *= (step - warm0 + 1) / warm
        for pg in opt.param_groups:
            pg["lr"] = lr
        m = mix(max(p, a.progress_start))
        tw = time.time()
        exs = batches.next(m)
        t_wait += time.time() - tw
        wav, content, toks, lmask, ctc_t, ctc_len, hit = build_batch(data, exs, audio_gpu, device)
        with torch.no_grad():
            mel = melf(augment(wav, content, g, device, m["augment"]), content)
            if a.specaug:
                mel = specaugment(mel, content, g, m["specaug"])
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=device == "cuda"):
            xa = model.encoder(mel)
            h = model.decoder.hidden(toks[:, :-1], xa)
            sel = lmask[:, :-1]
            # the 51,864-wide logits only where there is a target
            logits = model.decoder.logits(h[sel])
            cl = ctc_head(xa).float().log_softmax(-1).transpose(0, 1)
        # Windows whose glossary prompt holds a term they speak weigh --term-weight
        # times as much: recall with the glossary (9/50) was the target furthest off.
        wt = 1.0 + (a.term_weight - 1.0) * hit[:, None].expand_as(sel)[sel].float()
        loss_ce = (F.cross_entropy(logits, toks[:, 1:][sel], reduction="none") * wt).sum() / wt.sum()
        frames = ((content + 2 * HOP - 1) // (2 * HOP)).clamp(max=xa.shape[1])
        loss_ctc = F.ctc_loss(cl, ctc_t, frames, ctc_len, blank=0, zero_infinity=True)
        loss = loss_ce + a.ctc * loss_ctc
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_([p_ for _, p_ in params], 1.0)
        opt.step()
        step += 1
        local += 1
        losses.append(loss_ce.item())
        ctcs.append(loss_ctc.item())
        if step % 100 == 0:
            # the rate over these 100 steps: the mix, and so the cost of a step, changes with progress
            now = time.time()
            log(f"step {step} loss {np.mean(losses[-100:]):.4f} ctc {np.mean(ctcs[-100:]):.4f} lr {lr:.2e} "
                f"progress {p:.3f}{f' (mix {max(p, a.progress_start):.3f})' if a.progress_start > p else ''} {min(100, local) / (now - t_last):.2f} steps/s, {t_wait:.0f} s waiting for examples")
            t_last = now
        if time.time() - last_watch > a.watch:
            log(f"step {step} quick WER: eval {quick_wer(model, tok, sup, watch_ev):.3f} "
                f"train {quick_wer(model, tok, sup, watch_tr):.3f} "
                f"30-s windows {quick_wer(model, tok, sup, watch_long, maxlen=220):.3f}")
            last_watch = time.time()
    trained += time.time() - t_train
    log(f"trained {local} steps this call ({step} in all, {trained:.0f} s of {total:.0f}), "
        f"{local / max(1e-9, time.time() - t_train):.2f} steps/s, {local * a.batch / max(1e-9, time.time() - t_train):.0f} "
        f"examples/s" + (f", peak GPU memory {torch.cuda.max_memory_allocated() / 2**30:.1f} GiB" if device == "cuda" else ""))
    meta = {"dims": dims, "used": used, "train_seconds": trained, "step": step, "calls": call + 1, "total": total,
            "progress_start": a.progress_start}
    if a.state:
        torch.save(dict(meta, model=model.state_dict(), ctc=ctc_head.state_dict(), opt=opt.state_dict()), a.state)

    # Round every weight to fp16 (the f16 file then holds exactly what the references used).
    with torch.no_grad():
        for p_ in model.parameters():
            p_.copy_(p_.half().float())
    # fp16 weights; the encoder's positions (not trained) stay float32, as the files hold them
    torch.save(dict(meta, model={k: v.cpu() if k == "encoder.positional_embedding" else v.half().cpu()
                                 for k, v in model.state_dict().items()},
                    ctc={k: v.half().cpu() for k, v in ctc_head.state_dict().items()}),
               os.path.join(a.out, "ckpt.pt"))
    model = model.float()
    export(model, tok, filters, os.path.join(a.out, "ggml-speechkit-f16.bin"), False)
    export(model, tok, filters, os.path.join(a.out, "ggml-speechkit-q8_0.bin"), True)
    log("exported")
    res = evaluate(model, tok, melf, ev, pcm, device, vocab_terms, log)
    res["summary"]["wer_train"] = quick_wer(model, tok, sup, watch_tr, maxlen=120)
    res["summary"]["wer_30s_windows"] = quick_wer(model, tok, sup, watch_long, maxlen=220)
    log(f"WER on {len(watch_tr)} training sentences: {res['summary']['wer_train']:.3f}, "
        f"on {len(watch_long)} 30-s windows of the passage: {res['summary']['wer_30s_windows']:.3f}")
    res["train"] = {"step": step, "train_seconds": trained, "calls": call + 1, "dims": dims, "total": total,
                    "progress_start": a.progress_start}
    json.dump(res, open(os.path.join(a.out, "pytorch-eval.json"), "w"))
    log("done")
    os._exit(0)  # the example workers


if __name__ == "__main__":
    main()
