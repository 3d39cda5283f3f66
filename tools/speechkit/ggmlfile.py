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
