"""whisper.cpp's legacy GGML file (convert-pt-to-ggml.py's layout), f16 or q8_0."""
import numpy as np


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


HPARAMS = ("n_vocab", "n_audio_ctx", "n_audio_state", "n_audio_head", "n_audio_layer",
           "n_text_ctx", "n_text_state", "n_text_head", "n_text_layer", "n_mels")


def load(path):
    """Reads a file export() wrote (f16 or q8_0): its dims and its tensors as float32 arrays in the
    model's state-dict layout (q8_0 blocks dequantized as ggml does: f16 scale times int8)."""
    b = open(path, "rb").read()
    o = 0

    def ints(n):
        nonlocal o
        v = np.frombuffer(b, "<i4", n, o)
        o += 4 * n
        return [int(x) for x in v]

    if ints(1)[0] != 0x67676D6C:
        raise ValueError(f"{path}: not a GGML file")
    h = ints(11)
    dims = dict(zip(HPARAMS, h[:10]))
    fr, fc = ints(2)
    o += 4 * fr * fc
    for _ in range(ints(1)[0]):
        n = ints(1)[0]  # (o += ints(...) would add to o as it was before the call)
        o += n
    sd = {}
    while o < len(b):
        n_dims, n_name, t = ints(3)
        shape = list(reversed(ints(n_dims)))
        name = b[o:o + n_name].decode()
        o += n_name
        n = int(np.prod(shape))
        if t == 0:
            a = np.frombuffer(b, "<f4", n, o).copy()
            o += 4 * n
        elif t == 1:
            a = np.frombuffer(b, "<f2", n, o).astype(np.float32)
            o += 2 * n
        elif t == 8:
            blk = np.frombuffer(b, np.uint8, n // 32 * 34, o).reshape(-1, 34)
            o += blk.size
            d = blk[:, :2].copy().view("<f2").astype(np.float32)
            a = (d * blk[:, 2:].copy().view(np.int8).astype(np.float32)).reshape(-1)
        else:
            raise ValueError(f"{path}: tensor {name} has type {t}")
        a = a.reshape(shape)
        if name in ("encoder.conv1.bias", "encoder.conv2.bias"):
            a = a.reshape(-1)
        sd[name] = a
    return dims, sd
