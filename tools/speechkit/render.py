"""espeak-ng rendering through libespeak-ng (ctypes): 16 kHz speech and the start
of every word, for the speechkit corpus (train.py) and evaluation set (evalset.py).
The Debian packages are extracted under ROOT (fetch.sh); libpcaudio is replaced by
a stub (stub/pcaudio.c) since nothing is played."""
import bisect
import ctypes
import json
import os
import random
from multiprocessing import Pool

import numpy as np

TRAIN_LANGS = ["en-us", "en-gb", "en-gb-scotland", "en-gb-x-rp", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-029"]
TRAIN_VARIANTS = ["m1", "m2", "m3", "m4", "m5", "m6", "m7", "f1", "f2", "f3", "f5", "klatt", "klatt2",
                  "klatt3", "Annie", "Andy", "adam", "linda", "john", "edward", "michel", "boris", "iven", "paul"]
HELDOUT = "en-us-nyc+f4"  # never rendered for training


_ES = {}


def _espeak_init(root):
    """Loads libespeak-ng in this worker (synchronous mode: audio and word events
    come back through the callback; no audio device is opened)."""
    lib_dir = os.path.join(root, "usr/lib/x86_64-linux-gnu")
    for d in ("libsonic.so.0", "libpcaudio.so.0"):
        ctypes.CDLL(os.path.join(lib_dir, d), mode=ctypes.RTLD_GLOBAL)
    lib = ctypes.CDLL(os.path.join(lib_dir, "libespeak-ng.so.1"))

    class Event(ctypes.Structure):
        _fields_ = [("type", ctypes.c_int), ("uid", ctypes.c_uint), ("text_position", ctypes.c_int),
                    ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                    ("user_data", ctypes.c_void_p), ("id", ctypes.c_char * 8)]

    cbtype = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(Event))
    state = {"chunks": [], "words": []}

    def cb(wav, n, ev):
        if n > 0:
            state["chunks"].append(np.ctypeslib.as_array(wav, shape=(n,)).copy())
        i = 0
        while ev[i].type != 0:
            if ev[i].type == 1:  # espeakEVENT_WORD
                state["words"].append((ev[i].text_position, ev[i].sample))
            i += 1
        return 0

    class Voice(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char_p), ("languages", ctypes.c_char_p), ("identifier", ctypes.c_char_p),
                    ("gender", ctypes.c_ubyte), ("age", ctypes.c_ubyte), ("variant", ctypes.c_ubyte),
                    ("xx1", ctypes.c_ubyte), ("score", ctypes.c_int), ("spare", ctypes.c_void_p)]

    cbf = cbtype(cb)
    rate = lib.espeak_Initialize(2, 0, lib_dir.encode(), 0)  # AUDIO_OUTPUT_SYNCHRONOUS
    if rate <= 0:
        raise RuntimeError("espeak_Initialize failed")
    lib.espeak_SetSynthCallback(cbf)
    _ES.update(lib=lib, cb=cbf, state=state, rate=rate, Voice=Voice)


def set_voice(voice):
    """As the espeak-ng command's -v: a voice name, else a language (each with +variant)."""
    lib = _ES["lib"]
    if lib.espeak_SetVoiceByName(voice.encode()) == 0:
        return
    v = _ES["Voice"](languages=voice.encode())
    if lib.espeak_SetVoiceByProperties(ctypes.byref(v)) != 0:
        raise RuntimeError("no voice " + voice)


def render_one(args):
    """espeak-ng → (16 kHz int16 with silence trimmed to 50 ms, start sample of each
    whitespace word of the spoken text)."""
    text, voice, speed, pitch, gap = args
    from scipy.signal import resample_poly  # imported where used: workers only
    lib, st = _ES["lib"], _ES["state"]
    st["chunks"].clear()
    st["words"].clear()
    set_voice(voice)
    for par, v in ((1, speed), (3, pitch), (7, gap)):
        lib.espeak_SetParameter(par, v, 0)
    b = text.encode()
    lib.espeak_Synth(b, len(b) + 1, 0, 1, 0, 0, None, None)
    x = np.concatenate(st["chunks"]).astype(np.float32) if st["chunks"] else np.zeros(0, np.float32)
    y = resample_poly(x, 320, 441) if len(x) else x
    a = np.abs(y)
    idx = np.nonzero(a > max(a.max() * 0.02, 1.0))[0] if len(a) else []
    if len(idx) == 0:
        return np.zeros(0, np.int16), []
    lo, hi = max(0, idx[0] - 800), min(len(y), idx[-1] + 800)
    starts, pos = [], 0
    for w in text.split(" "):
        starts.append(pos)
        pos += len(w) + 1
    ws = [None] * len(starts)
    for tp, smp in st["words"]:
        k = bisect.bisect_right(starts, tp - 1) - 1
        if 0 <= k < len(ws) and ws[k] is None:
            ws[k] = max(0, int(smp * 16000 / _ES["rate"]) - int(lo))
    last = 0
    for k in range(len(ws)):
        ws[k] = int(last if ws[k] is None else max(ws[k], last))
        last = ws[k]
    return np.clip(y[lo:hi], -32768, 32767).astype(np.int16), ws


def voice_params(rnd, voice=None):
    if voice is None:
        voice = rnd.choice(TRAIN_LANGS) + "+" + rnd.choice(TRAIN_VARIANTS)
    return voice, rnd.randint(125, 215), rnd.randint(25, 75), rnd.choice([0, 0, 1, 2, 3])


def _render_shard(args):
    """Renders one shard of jobs into DIR/shardN.npy (int16, utterances back to back);
    returns each utterance's length and word starts. Only these small lists travel
    back through the pool: pickling the audio itself (17 GB for 146 h) took most of
    the first GPU call."""
    path, jobs = args
    audio, lens, starts = [], [], []
    for job in jobs:
        y, ws = render_one(job)
        audio.append(y)
        lens.append(int(len(y)))
        starts.append(ws)
    np.save(path, np.concatenate(audio) if audio else np.zeros(0, np.int16))
    return lens, starts


def render_all(root, items, seed, copies, procs, shard_dir):
    """Renders every item copies times (random training voice each time) into
    shard_dir; an existing complete shard_dir (a warm machine's earlier call) is
    reused. Returns (audio int16, lengths, word starts, owner item index)."""
    rnd = random.Random(seed)
    jobs, owner = [], []
    for c in range(copies):
        for i, it in enumerate(items):
            jobs.append((it["spoken"],) + voice_params(rnd))
            owner.append(i)
    index = os.path.join(shard_dir, "index.json")
    if not os.path.exists(index):
        os.makedirs(shard_dir, exist_ok=True)
        n = procs * 8
        shards = [(os.path.join(shard_dir, f"shard{k:03d}.npy"), jobs[k::n]) for k in range(n)]
        with Pool(procs, initializer=_espeak_init, initargs=(root,)) as p:
            out = p.map(_render_shard, shards, chunksize=1)
        # shard k holds jobs k, k+n, k+2n, ...: put lengths back in job order
        lens, starts = [0] * len(jobs), [None] * len(jobs)
        for k, (ls, ss) in enumerate(out):
            for j, (l, st) in enumerate(zip(ls, ss)):
                lens[k + j * n], starts[k + j * n] = l, st
        with open(index, "w") as f:
            json.dump({"n": n, "lens": lens, "starts": starts}, f)
    with open(index) as f:
        idx = json.load(f)
    n = idx["n"]
    parts = [np.load(os.path.join(shard_dir, f"shard{k:03d}.npy"), mmap_mode="r") for k in range(n)]
    audio = np.empty(sum(len(p) for p in parts), np.int16)
    # Lay the utterances out in job order.
    src = [0] * n
    pos = 0
    for j, l in enumerate(idx["lens"]):
        k = j % n
        audio[pos:pos + l] = parts[k][src[k]:src[k] + l]
        src[k] += l
        pos += l
    return audio, np.array(idx["lens"], np.int64), idx["starts"], owner
