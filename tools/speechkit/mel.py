"""openai-whisper's log-mel front end in torch, as the trainer feeds the encoder
(melcheck.py checks it against the kit's reference and Hark's engine/whisper/mel)."""
import numpy as np
import torch

SR, HOP, NFFT, NFRAMES, NSAMPLES = 16000, 160, 400, 3000, 480000


class Mel:
    def __init__(self, filters_npz, device):
        self.filters = torch.from_numpy(np.load(filters_npz)["mel_80"]).to(device)
        self.window = torch.hann_window(NFFT).to(device)

    def __call__(self, audio, content):
        """audio [B, NSAMPLES] float32 (zeros past the content); content [B] samples.
        Returns [B, 80, 3000]: the window's frames as openai's transcribe() feeds them
        (log-mel of the audio plus 30 s of zeros, frames past the content zeroed)."""
        pad = torch.cat([audio, torch.zeros_like(audio)], 1)
        st = torch.stft(pad, NFFT, HOP, window=self.window, return_complex=True)
        mag = st[..., :-1].abs() ** 2
        spec = self.filters @ mag
        log = torch.clamp(spec, min=1e-10).log10()
        log = torch.maximum(log, log.amax(dim=(1, 2), keepdim=True) - 8.0)
        log = (log + 4.0) / 4.0
        log = log[..., :NFRAMES]
        frames = torch.arange(NFRAMES, device=audio.device)[None, :]
        nf = (content // HOP)[:, None]
        return torch.where((frames < nf)[:, None, :], log, torch.zeros_like(log))
