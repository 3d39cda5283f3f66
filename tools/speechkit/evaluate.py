"""Greedy decoding with openai's default filters, WER, and the evaluation that
train.py writes to pytorch-eval.json."""
import json
import random

import numpy as np
import torch

from mel import NSAMPLES, SR
from render import HELDOUT
from tok import EOT, NO_SPEECH, NO_TS, NVOCAB, SOT, SOT_PREV, TS0


@torch.no_grad()
def greedy(model, mel, tok, suppress, prompt=None, maxlen=120):
    """No-timestamp greedy decoding as `transcribe(temperature=0, without_timestamps=True)`:
    suppress_blank at the first step, the non-speech tokens and the special tokens.
    Returns the tokens and each step's top-2 margin."""
    xa = model.encoder(mel[None])
    seq = ([SOT_PREV] + prompt + [SOT] if prompt else [SOT]) + [NO_TS]
    out, margins = [], []
    sup = torch.zeros(NVOCAB, dtype=torch.bool, device=mel.device)
    sup[suppress] = True
    sup[[SOT, SOT_PREV, NO_SPEECH, NO_TS, 50358, 50359]] = True
    sup[TS0:] = True
    for i in range(maxlen):
        logits = model.decoder(torch.tensor([seq + out], device=mel.device), xa)[0, -1].float()
        logits = logits.masked_fill(sup, float("-inf"))
        if i == 0:
            logits[[220, EOT]] = float("-inf")
        top = logits.topk(2)
        margins.append(float(top.values[0] - top.values[1]))
        t = int(top.indices[0])
        if t == EOT:
            break
        out.append(t)
    return out, margins


def words(s):
    import re
    return re.sub(r"[^a-z0-9' ]", " ", s.lower()).split()


def lacks_last_word(rw, hw):
    """An output (words hw) shorter than what was spoken (rw) that does not end on its last word: the model
    stopped early."""
    return len(hw) < len(rw) and (not hw or hw[-1] != rw[-1])


def wer(ref, hyp):
    r, h = words(ref), words(hyp)
    d = list(range(len(h) + 1))
    for i in range(1, len(r) + 1):
        prev, d[0] = d[0], i
        for j in range(1, len(h) + 1):
            cur = min(d[j] + 1, d[j - 1] + 1, prev + (r[i - 1] != h[j - 1]))
            prev, d[j] = d[j], cur
    return d[len(h)], len(r)


def evaluate(model, tok, melf, ev, pcm, device, vocab_terms, log):
    model.eval()
    sup = tok.non_speech()
    res = {"sentences": [], "summary": {}}
    errs = {"all": [0, 0], "heldout": [0, 0]}
    recall = {"none": [0, 0], "glossary": [0, 0]}
    short = 0  # outputs that lacks_last_word
    for e in ev:
        a = torch.from_numpy(pcm[e["start"]:e["end"]].astype(np.float32) / 32768).to(device)
        wav = torch.zeros(1, NSAMPLES, device=device)
        wav[0, :len(a)] = a
        mel = melf(wav, torch.tensor([len(a)], device=device))[0]
        toks, margins = greedy(model, mel, tok, sup)
        hyp = tok.decode(toks).strip()
        r = {"id": e["id"], "voice": e["voice"], "tokens": toks, "margins": [round(m, 4) for m in margins], "text": hyp}
        ref = e["spoken"]
        ed, n = wer(ref, hyp)
        short += lacks_last_word(words(ref), words(hyp))
        errs["all"][0] += ed
        errs["all"][1] += n
        if e["voice"] == HELDOUT:
            errs["heldout"][0] += ed
            errs["heldout"][1] += n
        if e["term"]:
            recall["none"][0] += e["term"] in hyp.split() or e["term"] in hyp
            recall["none"][1] += 1
            gl = [e["term"]] + [t for t in vocab_terms if t != e["term"]][:4]
            random.Random(e["id"]).shuffle(gl)
            ptoks = tok.encode(" " + ", ".join(gl) + ".")
            gt, gm = greedy(model, mel, tok, sup, prompt=ptoks)
            ghyp = tok.decode(gt).strip()
            recall["glossary"][0] += e["term"] in ghyp
            recall["glossary"][1] += 1
            r.update(glossary=", ".join(gl), glossary_tokens=gt, glossary_text=ghyp,
                     glossary_margins=[round(m, 4) for m in gm])
        res["sentences"].append(r)
    res["summary"] = {"wer": errs["all"][0] / max(1, errs["all"][1]),
                      "wer_heldout": errs["heldout"][0] / max(1, errs["heldout"][1]),
                      "recall_none": recall["none"], "recall_glossary": recall["glossary"],
                      "short_without_last_word": short}
    log(f"eval: {json.dumps(res['summary'])}")
    model.train()
    return res


def long_windows(ev, pcm, n=4):
    """Up to n stretches of the evaluation passage, each as many whole sentences
    as fit in 30 s from where the last ended: [(audio float32, reference)], the
    quick check of several utterances in one window (long-form failed in call 7)."""
    out, i = [], 0
    while len(out) < n and i < len(ev):
        lo = max(0, ev[i]["start"] - SR // 5)
        j = i
        while j + 1 < len(ev) and ev[j + 1]["end"] + SR // 5 - lo <= NSAMPLES:
            j += 1
        hi = min(len(pcm), ev[j]["end"] + SR // 5, lo + NSAMPLES)
        out.append((pcm[lo:hi].astype(np.float32) / 32768, " ".join(e["spoken"] for e in ev[i:j + 1])))
        i = j + 1
    return out


def clip_mel(melf, a, device):
    wav = torch.zeros(1, NSAMPLES, device=device)
    wav[0, :len(a)] = a
    return melf(wav, torch.tensor([len(a)], device=device))[0]


def quick_wer(model, tok, sup, clips, maxlen=80):
    """WER of greedy decoding over clips [(mel, reference)]."""
    model.eval()
    e = n = 0
    for mel, ref in clips:
        toks, _ = greedy(model, mel, tok, sup, maxlen=maxlen)
        d, k = wer(ref, tok.decode(toks))
        e, n = e + d, n + k
    model.train()
    return e / max(1, n)
