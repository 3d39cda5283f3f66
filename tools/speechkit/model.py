"""The Whisper model in openai-whisper's layout and tensor names, so that its
state dict exports to whisper.cpp's file as openai's checkpoints do."""
import math

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from tok import NVOCAB


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
