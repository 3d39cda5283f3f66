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

DIR layout: --kit holds gpt2.tiktoken and mel_filters.npz (the kit's assets);
--espeak the extracted espeak-ng packages (usr/bin/espeak-ng ...); --corpus
train.jsonl and eval.jsonl from corpus.py; --eval-pcm the evaluation passage
(s16le mono 16 kHz, eval.json gives each sentence's samples).
"""
import argparse
import base64
import json
import math
import os
import random
import time

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from mel import HOP, NFRAMES, NSAMPLES, SR, Mel  # noqa: F401 (export.py and tests use train.Mel)
EOT, SOT, SOT_PREV, NO_SPEECH, NO_TS, TS0 = 50256, 50257, 50360, 50361, 50362, 50363
NVOCAB = 51864


# ---------------------------------------------------------------- tokenizer

class Tok:
    """GPT-2 BPE as tiny.en uses it (openai-whisper's gpt2.tiktoken)."""

    def __init__(self, path):
        ranks = {}
        for line in open(path, "rb"):
            if line.strip():
                t, r = line.split()
                ranks[base64.b64decode(t)] = int(r)
        self.ranks = ranks
        self.bytes = [b""] * EOT
        for b, r in ranks.items():
            self.bytes[r] = b
        try:
            import tiktoken
            self.enc = tiktoken.Encoding(
                name="gpt2", explicit_n_vocab=None,
                pat_str=r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
                mergeable_ranks=ranks, special_tokens={})
        except ImportError:  # plain BPE (ASCII text only): for smoke tests where tiktoken is missing
            self.enc = None

    def encode(self, s):
        if self.enc is not None:
            return self.enc.encode_ordinary(s)
        import re
        out = []
        for piece in re.findall(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[A-Za-z]+| ?[0-9]+| ?[^\sA-Za-z0-9]+|\s+(?!\S)|\s+""", s):
            parts = [bytes([c]) for c in piece.encode()]
            while len(parts) > 1:
                best = min(range(len(parts) - 1), key=lambda i: self.ranks.get(parts[i] + parts[i + 1], 1 << 30))
                if parts[best] + parts[best + 1] not in self.ranks:
                    break
                parts[best:best + 2] = [parts[best] + parts[best + 1]]
            out += [self.ranks[p] for p in parts]
        return out

    def decode(self, toks):
        return b"".join(self.bytes[t] for t in toks if t < EOT).decode("utf-8", "replace")

    def non_speech(self):
        """openai-whisper's Tokenizer.non_speech_tokens."""
        symbols = list('"#()*+/:;<=>@[\\]^_`{|}~「」『』')
        symbols += "<< >> <<< >>> -- --- -( -[ (' (\" (( )) ((( ))) [[ ]] {{ }} ♪♪ ♪♪♪".split()
        misc = set("♩♪♫♬♭♮♯")
        result = {self.encode(" -")[0], self.encode(" '")[0]}
        for s in symbols + list(misc):
            for toks in (self.encode(s), self.encode(" " + s)):
                if len(toks) == 1 or s in misc:
                    result.add(toks[0])
        return sorted(result)


from augment import augment, specaugment  # noqa: E402
from render import HELDOUT, render_all  # noqa: E402


# ---------------------------------------------------------------- model (openai-whisper's layout and names)

def sinusoids(length, channels, max_timescale=10000):
    """openai-whisper's encoder positions, computed in float64 and rounded once, so
    that every machine gets the same float32 values (torch's float32 sin and exp
    differed in the last bit between the device and this machine)."""
    inc = np.log(max_timescale) / (channels // 2 - 1)
    inv = np.exp(-inc * np.arange(channels // 2))
    t = np.arange(length)[:, None] * inv[None, :]
    return torch.from_numpy(np.concatenate([np.sin(t), np.cos(t)], axis=1).astype(np.float32))


class LayerNorm(nn.LayerNorm):
    def forward(self, x):  # in fp32, as openai-whisper's
        return super().forward(x.float()).type(x.dtype)


class MHA(nn.Module):
    def __init__(self, n_state, n_head):
        super().__init__()
        self.n_head = n_head
        self.query = nn.Linear(n_state, n_state)
        self.key = nn.Linear(n_state, n_state, bias=False)
        self.value = nn.Linear(n_state, n_state)
        self.out = nn.Linear(n_state, n_state)

    def forward(self, x, xa=None, mask=False, kv=None):
        q = self.query(x)
        if kv is not None and kv[0] is not None:
            k, v = kv
        else:
            src = x if xa is None else xa
            k, v = self.key(src), self.value(src)
        B, T, C = q.shape
        h = self.n_head
        qh = q.view(B, T, h, -1).transpose(1, 2)
        kh = k.view(B, k.shape[1], h, -1).transpose(1, 2)
        vh = v.view(B, v.shape[1], h, -1).transpose(1, 2)
        if hasattr(F, "scaled_dot_product_attention"):
            o = F.scaled_dot_product_attention(qh, kh, vh, is_causal=mask and T > 1)
        else:
            w = qh @ kh.transpose(-1, -2) / math.sqrt(qh.shape[-1])
            if mask and T > 1:
                w = w + torch.full((T, T), float("-inf"), device=w.device).triu(1)
            o = w.softmax(-1) @ vh
        return self.out(o.transpose(1, 2).reshape(B, T, C)), (k, v)


class Block(nn.Module):
    def __init__(self, n_state, n_head, cross):
        super().__init__()
        self.attn = MHA(n_state, n_head)
        self.attn_ln = LayerNorm(n_state)
        self.cross_attn = MHA(n_state, n_head) if cross else None
        self.cross_attn_ln = LayerNorm(n_state) if cross else None
        self.mlp = nn.Sequential(nn.Linear(n_state, 4 * n_state), nn.GELU(), nn.Linear(4 * n_state, n_state))
        self.mlp_ln = LayerNorm(n_state)

    def forward(self, x, xa=None, mask=False):
        x = x + self.attn(self.attn_ln(x), mask=mask)[0]
        if self.cross_attn is not None:
            x = x + self.cross_attn(self.cross_attn_ln(x), xa)[0]
        return x + self.mlp(self.mlp_ln(x))


class Encoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        n = d["n_audio_state"]
        self.conv1 = nn.Conv1d(d["n_mels"], n, 3, padding=1)
        self.conv2 = nn.Conv1d(n, n, 3, stride=2, padding=1)
        self.register_buffer("positional_embedding", sinusoids(d["n_audio_ctx"], n))
        self.blocks = nn.ModuleList([Block(n, d["n_audio_head"], False) for _ in range(d["n_audio_layer"])])
        self.ln_post = LayerNorm(n)

    def forward(self, x):
        x = F.gelu(self.conv1(x))
        x = F.gelu(self.conv2(x)).permute(0, 2, 1)
        x = (x + self.positional_embedding).to(x.dtype)
        for b in self.blocks:
            x = b(x)
        return self.ln_post(x)


class Decoder(nn.Module):
    def __init__(self, d):
        super().__init__()
        n = d["n_text_state"]
        self.token_embedding = nn.Embedding(d["n_vocab"], n)
        self.positional_embedding = nn.Parameter(torch.empty(d["n_text_ctx"], n))
        self.blocks = nn.ModuleList([Block(n, d["n_text_head"], True) for _ in range(d["n_text_layer"])])
        self.ln = LayerNorm(n)

    def hidden(self, tokens, xa):
        x = self.token_embedding(tokens) + self.positional_embedding[: tokens.shape[-1]]
        x = x.to(xa.dtype)
        for b in self.blocks:
            x = b(x, xa, mask=True)
        return self.ln(x)

    def logits(self, h):
        return (h @ self.token_embedding.weight.to(h.dtype).T).float()

    def forward(self, tokens, xa):
        return self.logits(self.hidden(tokens, xa))


class Whisper(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.dims = d
        self.encoder = Encoder(d)
        self.decoder = Decoder(d)


# 128 wide, 4 heads of 32: at 160 wide the q8_0 file was 14.0 MB, over the
# issue's 13 MB (the 51,864-row token embedding is most of it); 6 encoder layers,
# since the encoder's layers are cheap in bytes and the acoustics are the hard part.
DIMS = dict(n_mels=80, n_vocab=NVOCAB, n_audio_ctx=1500, n_audio_state=128, n_audio_head=4, n_audio_layer=6,
            n_text_ctx=448, n_text_state=128, n_text_head=4, n_text_layer=4)


def frozen_row(r, n):
    """The kit's pattern for embedding rows of tokens the corpus never uses."""
    c = torch.arange(n)
    return (((7 * r + 13 * c) % 251 - 125) / 125 * 0.02).half().float()


# ---------------------------------------------------------------- examples

def ts(sec):
    return TS0 + int(round(min(max(sec, 0.0), 30.0) / 0.02))


def heard_words(starts, n, take):
    """How many words of an utterance of n samples are complete within its first
    take samples (a word ends where the next begins)."""
    ends = list(starts[1:]) + [n]
    k = 0
    while k < len(ends) and ends[k] <= take:
        k += 1
    return k


def plain(w):
    return "".join(c for c in w.lower() if c.isalnum())


def target_words(item, spoken_heard, use_term):
    """The target's words for the first spoken_heard spoken words."""
    sw = item["spoken"].split()
    if not item["term"] or not use_term:
        return sw[:spoken_heard]
    tw = item["text"].split()
    snd = [plain(w) for w in item["sounds"].split()]
    j = next((j for j in range(len(sw)) if [plain(w) for w in sw[j:j + len(snd)]] == snd), len(sw))
    if spoken_heard <= j:
        c = spoken_heard
    elif spoken_heard < j + len(snd):
        c = j
    else:
        c = spoken_heard - len(snd) + 1
    return tw[:c]


# ---------------------------------------------------------------- curriculum

def ramp(p, a, b):
    return min(1.0, max(0.0, (p - a) / (b - a)))


def mix(p):
    """What the examples hold at training progress p (0..1 of the planned total).
    The first call's mix from step 0 (75 % timestamped, 35 % long-form, prompts
    on all, noise on 70 %) left the decoder learning only a language prior:
    start on clean single utterances without prompts or timestamps, then bring
    the rest in. The second session's ramps (long-form from 0.3, full at 0.6,
    at most 21 % of the examples) left long-form decoding unlearned (WER 92.5 %
    on the passage): long-form and prompts now come in from 0.1-0.15, full at
    0.4, and long-form is half of the timestamped windows."""
    return {
        "timestamps": 0.6 * ramp(p, 0.1, 0.35),    # of all windows
        "long": 0.5 * ramp(p, 0.15, 0.4),          # of the timestamped ones: 30-s long-form
        "cut": 0.5 * ramp(p, 0.15, 0.4),           # a window ending inside an utterance
        "multi": 0.4 * ramp(p, 0.1, 0.35),         # a no-timestamp window going on to another utterance
        "glossary": 0.5 * ramp(p, 0.15, 0.4),
        "previous": 0.5 * ramp(p, 0.15, 0.4),
        "augment": ramp(p, 0.1, 0.4),              # noise/reverb share and depth
        "specaug": ramp(p, 0.05, 0.3),             # time and frequency masks
    }


# CTC characters (the auxiliary loss on the encoder output): blank, space, apostrophe, a-z.
CTC_CHARS = " '" + "abcdefghijklmnopqrstuvwxyz"
NCTC = len(CTC_CHARS) + 1


def ctc_ids(words):
    s = "".join(c for c in " ".join(words).lower().replace("-", " ") if c in CTC_CHARS)
    return [CTC_CHARS.index(c) + 1 for c in " ".join(s.split())]


class Data:
    def __init__(self, items, lens, starts, owner, tok, vocab_terms):
        self.items, self.owner, self.tok, self.starts = items, owner, tok, starts
        ok = [i for i, n in enumerate(lens) if 1600 < n < NSAMPLES - SR]
        self.utts = ok
        self.len = lens
        self.off = np.concatenate([[0], np.cumsum(lens)[:-1]])
        self.terms = vocab_terms
        self.cache = {}
        used = set()
        for it in items:
            for k in ("text", "spoken"):
                used.update(self.enc(" " + it[k]))
                used.update(self.enc(it[k]))
        for t in vocab_terms:
            used.update(self.enc(" " + t))
        self.used_tokens = used

    def enc(self, s):
        t = self.cache.get(s)
        if t is None:
            t = self.cache[s] = self.tok.encode(s)
        return t

    def target_text(self, u, glossary):
        it = self.items[self.owner[u]]
        if it["term"] and it["term"] in glossary:
            return it["text"]
        return it["spoken"]

    def words(self, u, take, n, glossary):
        it = self.items[self.owner[u]]
        use = bool(it["term"]) and it["term"] in glossary
        if take >= n:
            return (it["text"] if use else it["spoken"]).split()
        return target_words(it, heard_words(self.starts[u], n, take), use)

    def spoken_words(self, u, take, n):
        sw = self.items[self.owner[u]]["spoken"].split()
        return sw if take >= n else sw[:heard_words(self.starts[u], n, take)]

    def example(self, rnd, m):
        """One training sequence at mix m: (placements [(utt, dst_sample, n_samples)],
        content samples, tokens, index of the first predicted token, CTC target,
        whether the glossary prompt holds a term spoken in the window)."""
        timestamps = rnd.random() < m["timestamps"]
        full = timestamps and rnd.random() < m["long"]     # a 30-s long-form window
        if full or rnd.random() >= m["cut"]:
            limit = NSAMPLES
        else:
            limit = rnd.randint(2 * SR, 28 * SR)
        pos = 0 if rnd.random() < 0.3 else rnd.randint(0, int(0.8 * SR))
        place, texts = [], []
        while pos < limit - 0.3 * SR:
            u = rnd.choice(self.utts)
            n = int(self.len[u])
            if texts and pos + n > limit and limit == NSAMPLES and not full:
                break                                      # no cut unless the mix asks for one
            take = min(n, limit - pos)
            place.append((u, pos, take))
            texts.append((u, pos, take, n))
            pos += take + rnd.randint(int(0.1 * SR), int(1.2 * SR))
            if take < n or (not full and rnd.random() >= (m["multi"] if not timestamps else 0.6)):
                break
        content = min(limit, max(p + t for _, p, t in place) + rnd.randint(0, int(0.5 * SR)))
        gl_terms = []
        if rnd.random() < m["glossary"]:
            win_terms = [self.items[self.owner[u]]["term"] for u, *_ in texts if self.items[self.owner[u]]["term"]]
            keep = [t for t in win_terms if rnd.random() < 0.85]
            gl_terms = keep + rnd.sample(self.terms, rnd.randint(0, 12))
            rnd.shuffle(gl_terms)
            gl_terms = list(dict.fromkeys(gl_terms))
        prompt = []
        if gl_terms:
            prompt += self.enc(" " + ", ".join(gl_terms) + ".")
        if rnd.random() < m["previous"]:
            prev = [self.target_text(rnd.choice(self.utts), gl_terms) for _ in range(rnd.randint(1, 4))]
            prompt += self.enc(" " + " ".join(prev))
        prompt = prompt[-223:]
        seq = ([SOT_PREV] + prompt if prompt else []) + [SOT]
        start = len(seq)
        if not timestamps:
            seq.append(NO_TS)
            start += 1
            body = []
            for u, p, take, n in texts:
                body += self.words(u, take, n, gl_terms)
            if body:
                seq += self.enc(" " + " ".join(body))
        else:
            for u, p, take, n in texts:
                words = self.words(u, take, n, gl_terms)
                t0 = p / SR
                seq.append(ts(t0))
                if take < n:
                    if not full and words:             # long-form: the cut segment's start alone
                        seq += self.enc(" " + " ".join(words))
                    break
                seq += self.enc(" " + " ".join(words))
                seq.append(ts((p + take) / SR))
        seq.append(EOT)
        seq = seq[:448]
        ctc = ctc_ids([w for u, p, take, n in texts for w in self.spoken_words(u, take, n)])
        term_hit = any(self.items[self.owner[u]]["term"] in gl_terms for u, *_ in texts) if gl_terms else False
        return place, content, seq, start, ctc, term_hit


_POOL_DATA = {}


def _make_batch(args):
    seed, bsz, m = args
    rnd = random.Random(seed)
    return [_POOL_DATA["data"].example(rnd, m) for _ in range(bsz)]


class Examples:
    """Batches made by worker processes while the GPU trains (one Python thread
    making them competed with the training loop for the interpreter). Forked
    before the workers touch CUDA; batch k is seeded from (seed, call, k)."""

    def __init__(self, data, seed, bsz, procs, depth=12):
        import multiprocessing as mp
        _POOL_DATA["data"] = data
        self.pool = mp.get_context("fork").Pool(procs)
        self.seed, self.bsz, self.depth, self.k, self.q = seed, bsz, depth, 0, []

    def next(self, m):
        while len(self.q) < self.depth:
            self.q.append(self.pool.apply_async(_make_batch, ((self.seed * 1000003 + self.k, self.bsz, m),)))
            self.k += 1
        return self.q.pop(0).get()


def build_batch(data, exs, audio_gpu, device):
    bsz = len(exs)
    wav = torch.zeros(bsz, NSAMPLES, device=device)
    for b, (place, *_rest) in enumerate(exs):
        for u, p, take in place:
            o = int(data.off[u])
            wav[b, p:p + take] = audio_gpu[o:o + take].float()
    content = torch.tensor([e[1] for e in exs], device=device)
    L = max(len(e[2]) for e in exs)
    toks = np.full((bsz, L), EOT, dtype=np.int64)
    lossmask = np.zeros((bsz, L), dtype=bool)
    for b, (_, _, seq, start, *_c) in enumerate(exs):
        toks[b, :len(seq)] = seq
        lossmask[b, start - 1:len(seq) - 1] = True
    ctc = [e[4] for e in exs]
    ctc_t = torch.tensor([c for cs in ctc for c in cs], dtype=torch.long)
    ctc_len = torch.tensor([len(c) for c in ctc], dtype=torch.long)
    hit = torch.tensor([e[5] for e in exs], dtype=torch.bool)
    return (wav, content, torch.from_numpy(toks).to(device), torch.from_numpy(lossmask).to(device),
            ctc_t.to(device), ctc_len.to(device), hit.to(device))


# ---------------------------------------------------------------- export (whisper.cpp's convert-pt-to-ggml.py layout)

F32_NAMES = {"encoder.conv1.bias", "encoder.conv2.bias", "encoder.positional_embedding", "decoder.positional_embedding"}


def ggml_tensors(model):
    sd = {k: v.detach().float().cpu().numpy() for k, v in model.state_dict().items()}
    for k in ("encoder.conv1.bias", "encoder.conv2.bias"):
        sd[k] = sd[k].reshape(-1, 1)
    return sd


def q8_0(a):
    """ggml block_q8_0: per 32 values an f16 scale then 32 int8."""
    a = a.reshape(-1, 32).astype(np.float32)
    amax = np.abs(a).max(1)
    d = amax / 127.0
    inv = np.where(d > 0, 1.0 / np.where(d > 0, d, 1), 0)
    q = np.round(a * inv[:, None]).astype(np.int8)
    out = np.empty((a.shape[0], 34), np.uint8)
    out[:, :2] = d.astype(np.float16).view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def export(model, tok, filters_npz, path, quant):
    d = model.dims
    ftype = 1 if not quant else 2007
    with open(path, "wb") as f:
        f.write(np.array([0x67676D6C], "<i4").tobytes())
        f.write(np.array([d["n_vocab"], d["n_audio_ctx"], d["n_audio_state"], d["n_audio_head"], d["n_audio_layer"],
                          d["n_text_ctx"], d["n_text_state"], d["n_text_head"], d["n_text_layer"], d["n_mels"], ftype],
                         "<i4").tobytes())
        filters = np.load(filters_npz)["mel_80"].astype(np.float32)
        f.write(np.array(filters.shape, "<i4").tobytes())
        f.write(filters.tobytes())
        f.write(np.array([len(tok.bytes)], "<i4").tobytes())
        for b in tok.bytes:
            f.write(np.array([len(b)], "<i4").tobytes())
            f.write(b)
        for name, data in ggml_tensors(model).items():
            n_dims = data.ndim
            if n_dims < 2 or name in F32_NAMES:
                t, raw = 0, data.astype("<f4").tobytes()
            elif quant and name not in ("encoder.conv1.weight", "encoder.conv2.weight") and data.shape[-1] % 32 == 0:
                t, raw = 8, q8_0(data)
            else:
                t, raw = 1, data.astype("<f2").tobytes()
            nb = name.encode()
            f.write(np.array([n_dims, len(nb), t], "<i4").tobytes())
            f.write(np.array(list(reversed(data.shape)), "<i4").tobytes())
            f.write(nb)
            f.write(raw)


# ---------------------------------------------------------------- greedy decoding (openai's default filters)

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


def wer(ref, hyp):
    import re
    r = re.sub(r"[^a-z0-9' ]", " ", ref.lower()).split()
    h = re.sub(r"[^a-z0-9' ]", " ", hyp.lower()).split()
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
                      "recall_none": recall["none"], "recall_glossary": recall["glossary"]}
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


# ---------------------------------------------------------------- main

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
        used, total = src["used"], src["total"]
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
    log(f"training for {budget:.0f} s (schedule over {total:.0f} s, batch {a.batch}, dims {json.dumps(dims)})")
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
        m = mix(p)
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
                f"progress {p:.3f} {min(100, local) / (now - t_last):.2f} steps/s, {t_wait:.0f} s waiting for examples")
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
    meta = {"dims": dims, "used": used, "train_seconds": trained, "step": step, "calls": call + 1, "total": total}
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
    res["train"] = {"step": step, "train_seconds": trained, "calls": call + 1, "dims": dims, "total": total}
    json.dump(res, open(os.path.join(a.out, "pytorch-eval.json"), "w"))
    log("done")
    os._exit(0)  # the example workers


if __name__ == "__main__":
    main()
