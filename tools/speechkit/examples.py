"""Training windows from the rendered utterances: which utterances where, the
target tokens (timestamps, prompts, vocabulary terms), the CTC target; made by
worker processes and assembled into batches on the GPU."""
import random

import numpy as np
import torch

from mel import NSAMPLES, SR
from prompt import timed_previous
from tok import EOT, NO_TS, SOT, SOT_PREV, TS0


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


def cut_words(item, starts, n, take):
    """How many spoken words a cut window keeps whole: k, those complete within take
    samples, the audio then ending at starts[k]. Never part of a term's "sounds like"
    spelling (whose target is one word), and starts[k] is a word event of its own: a
    word without one has its predecessor's start (render.py), so where starts[k] equals
    starts[k-1], word k-1's end is unknown and it is left out too."""
    k = heard_words(starts, n, take)
    j, m = len(starts), 0
    if item["term"]:
        sw = [plain(w) for w in item["spoken"].split()]
        snd = [plain(w) for w in item["sounds"].split()]
        j = next((j for j in range(len(sw)) if sw[j:j + len(snd)] == snd), len(sw))
        m = len(snd)
    while True:
        if j < k < j + m:
            k = j
        elif 0 < k < len(starts) and starts[k] == starts[k - 1]:
            k -= 1
        else:
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
        # made-up terms (madeup.py): always in their windows' glossaries, and distractors in others
        self.made = sorted({it["term"] for it in items if it.get("madeup")})
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

    def words(self, u, take, n, glossary, k=None):
        """The target's words of utterance u when its first take of n samples are in
        the window (k: how many spoken words it keeps, if not those complete by take)."""
        it = self.items[self.owner[u]]
        use = bool(it["term"]) and it["term"] in glossary
        if take >= n:
            return (it["text"] if use else it["spoken"]).split()
        return target_words(it, heard_words(self.starts[u], n, take) if k is None else k, use)

    def spoken_words(self, u, take, n, k=None):
        sw = self.items[self.owner[u]]["spoken"].split()
        return sw if take >= n else sw[:heard_words(self.starts[u], n, take) if k is None else k]

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
            k = None
            if take < n and not timestamps:
                # No timestamps, so no open segment to say that the utterance goes on: as Whisper
                # truncates the audio before a cut segment, the audio ends where the last word the
                # target keeps ends (the next one's start), with no part of a word it leaves out. A
                # fragment left untranscribed before the end-of-text taught the model to drop the
                # last word of a clip that ends soon after it (the fifth session: 40/200 outputs).
                k = cut_words(self.items[self.owner[u]], self.starts[u], n, take)
                if k == 0 and texts:
                    break                                  # no whole word of it: leave it out
                if k > 0:
                    take = int(self.starts[u][k])
            place.append((u, pos, take))
            texts.append((u, pos, take, n, k))
            pos += take + rnd.randint(int(0.1 * SR), int(1.2 * SR))
            if take < n or (not full and rnd.random() >= (m["multi"] if not timestamps else 0.6)):
                break
        content = min(limit, max(p + t for _, p, t in place) + rnd.randint(0, int(0.5 * SR)))
        gl_terms = []
        made = [self.items[self.owner[u]]["term"] for u, *_ in texts if self.items[self.owner[u]].get("madeup")]
        if made or rnd.random() < m["glossary"]:
            win_terms = [self.items[self.owner[u]]["term"] for u, *_ in texts
                         if self.items[self.owner[u]]["term"] and not self.items[self.owner[u]].get("madeup")]
            keep = made + [t for t in win_terms if rnd.random() < 0.85]
            gl_terms = keep + rnd.sample(self.terms, rnd.randint(0, 12))
            if self.made:
                gl_terms += rnd.sample(self.made, rnd.randint(0, 3))
            rnd.shuffle(gl_terms)
            gl_terms = list(dict.fromkeys(gl_terms))
        prompt = []
        if gl_terms:
            prompt += self.enc(" " + ", ".join(gl_terms) + ".")
        if rnd.random() < m["previous"]:
            prev = [self.target_text(rnd.choice(self.utts), gl_terms) for _ in range(rnd.randint(1, 4))]
            if rnd.random() < 0.5:  # as long-form transcription feeds it back (prompt.py)
                prompt += timed_previous(rnd, prev, self.enc, ts)
            else:
                prompt += self.enc(" " + " ".join(prev))
        prompt = prompt[-223:]
        seq = ([SOT_PREV] + prompt if prompt else []) + [SOT]
        start = len(seq)
        if not timestamps:
            seq.append(NO_TS)
            start += 1
            body = []
            for u, p, take, n, k in texts:
                body += self.words(u, take, n, gl_terms, k)
            if body:
                seq += self.enc(" " + " ".join(body))
        else:
            for u, p, take, n, k in texts:
                words = self.words(u, take, n, gl_terms, k)
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
        ctc = ctc_ids([w for u, p, take, n, k in texts for w in self.spoken_words(u, take, n, k)])
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
