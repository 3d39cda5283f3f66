package vocab

import "strings"

// Whisper conditions each 30-s window on at most n_text_ctx/2 - 1 = 223
// earlier tokens (every Whisper model has n_text_ctx 448).
const ContextTokens = 223

// PromptTokens is the vocabulary's share of that context by default; the
// rest stays for the text already transcribed (the previous window's, or
// the streamer's committed text), which matters as much for accuracy.
const PromptTokens = 112

// Encoder tokenizes text as Whisper does (whisper.Vocab).
type Encoder interface {
	Encode(text string) []int32
}

// Prompt is a vocabulary prompt ready for the decoder.
type Prompt struct {
	Text    string   `json:"text"`
	Tokens  []int32  `json:"-"`
	Used    []string `json:"used"`    // the terms in the prompt, in order
	Dropped []string `json:"dropped"` // the terms that did not fit the budget
}

// BuildPrompt writes the terms as a glossary (" Kubernetes, PyTorch, Hark.")
// in the order given (most relevant first), adding terms while the whole
// prompt stays within budget tokens; the rest are reported as Dropped.
// Whisper then continues in the prompt's style, so terms that are spoken
// tend to come out spelt as listed. budget <= 0 turns the prompt off.
func BuildPrompt(enc Encoder, terms []Term, budget int) Prompt {
	var p Prompt
	if budget <= 0 {
		return p
	}
	budget = min(budget, ContextTokens)
	var used []string
	for i, t := range terms {
		try := append(used[:len(used):len(used)], t.Text)
		text := " " + strings.Join(try, ", ") + "."
		toks := enc.Encode(text)
		if len(toks) > budget {
			for _, d := range terms[i:] {
				p.Dropped = append(p.Dropped, d.Text)
			}
			// A shorter later term could still fit, but skipping over the
			// order would make the prompt depend on term lengths: keep it
			// simple and predictable, and tell the user what was left out.
			break
		}
		used, p.Text, p.Tokens = try, text, toks
	}
	p.Used = used
	return p
}

// DefaultBias is the logit bias added to a term's first token: enough to
// tip a close call towards the term, far too little to make the model
// say it unprompted (log-probabilities of likely tokens differ by more).
const DefaultBias = 2.0

// Bias returns the first token of each term (as spoken mid-sentence, with
// its leading space) mapped to weight. Only first tokens are biased: later pieces of a word follow once
// it has started, and biasing common pieces would distort other words.
func Bias(enc Encoder, terms []Term, weight float32) map[int32]float32 {
	if len(terms) == 0 || weight == 0 {
		return nil
	}
	b := map[int32]float32{}
	for _, t := range terms {
		if toks := enc.Encode(" " + t.Text); len(toks) > 0 {
			b[toks[0]] = weight
		}
	}
	return b
}
