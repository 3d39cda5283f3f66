package vocab

import "github.com/harkapp/hark/engine/whisper"

// Steer puts terms into opt: as the vocabulary prompt kept on every window
// (within budget tokens; none when budget <= 0) and, when bias is not 0, as a
// logit bias on their first tokens. It returns the prompt, whose Dropped
// terms the caller should report.
func Steer(opt *whisper.TranscribeOptions, enc Encoder, terms []Term, budget int, bias float32) Prompt {
	p := BuildPrompt(enc, terms, budget)
	opt.Vocabulary = p.Tokens
	opt.LogitBias = Bias(enc, terms, bias)
	return p
}
