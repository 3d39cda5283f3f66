package cli

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/internal/vocab"
)

// loadVocabulary reads --vocabulary into opt (prompt and bias) and returns
// the rewriter for its "sounds like" spellings (nil without a file). Terms
// that do not fit the prompt budget are named on stderr.
func loadVocabulary(stderr io.Writer, fl transcribeOptions, mf *whisper.File, opt *whisper.TranscribeOptions) (*rewrite.Rewriter, error) {
	if fl.vocabulary == "" {
		if fl.vocabBias != 0 {
			return nil, fmt.Errorf("--vocabulary-bias needs --vocabulary")
		}
		return nil, nil
	}
	if fl.vocabTokens < 0 || fl.vocabTokens > vocab.ContextTokens {
		return nil, fmt.Errorf("--vocabulary-tokens %d is outside [0, %d]", fl.vocabTokens, vocab.ContextTokens)
	}
	if fl.vocabBias < -10 || fl.vocabBias > 10 {
		return nil, fmt.Errorf("--vocabulary-bias %g is outside [-10, 10]", fl.vocabBias)
	}
	st, err := os.Stat(fl.vocabulary)
	if err != nil {
		return nil, err
	}
	if st.Size() > vocab.MaxText {
		return nil, fmt.Errorf("--vocabulary %s: %d bytes, at most %d", fl.vocabulary, st.Size(), vocab.MaxText)
	}
	b, err := os.ReadFile(fl.vocabulary)
	if err != nil {
		return nil, err
	}
	terms, err := vocab.Parse(string(b))
	if err != nil {
		return nil, fmt.Errorf("--vocabulary %s: %w", fl.vocabulary, err)
	}
	p := vocab.Steer(opt, mf.Vocab, terms, fl.vocabTokens, fl.vocabBias)
	if len(p.Dropped) > 0 {
		fmt.Fprintf(stderr, "hark: the vocabulary prompt holds %d tokens; %d terms did not fit and only apply as replacements: %s\n",
			len(p.Tokens), len(p.Dropped), strings.Join(p.Dropped, ", "))
	}
	return rewrite.New(rewrite.Options{Vocabulary: terms})
}
