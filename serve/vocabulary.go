package serve

import (
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/internal/vocab"
)

// steerVocabulary puts a request's vocabulary into opt (the prompt's
// vocabulary share; terms past it only apply as replacements) and returns
// the rewriter of its "sounds like" spellings (nil without terms).
func steerVocabulary(opt *whisper.TranscribeOptions, enc vocab.Encoder, terms []vocab.Term) (*rewrite.Rewriter, error) {
	if len(terms) == 0 {
		return nil, nil
	}
	vocab.Steer(opt, enc, terms, vocab.PromptTokens, 0)
	return rewrite.New(rewrite.Options{Vocabulary: terms})
}
