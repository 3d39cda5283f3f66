"""The tiny.en tokenizer (openai-whisper's gpt2.tiktoken) and its special tokens."""
import base64

EOT, SOT, SOT_PREV, NO_SPEECH, NO_TS, TS0 = 50256, 50257, 50360, 50361, 50362, 50363
NVOCAB = 51864


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
