package serve

import (
	"fmt"
	"net/http"
)

// promptTokens tokenizes text unless it cannot fit the context: no token
// stands for more bytes than the vocabulary's longest entry, so a text of
// B bytes has at least B/longest tokens. A prompt past that bound is
// refused before tokenizing (a 7 MB prompt would otherwise be tokenized
// whole, hundreds of MB, only to be refused); one under it is tokenized
// and checked exactly by the caller.
func (l *llmModel) promptTokens(text string, addBOS bool) ([]int32, error) {
	longest := 1
	for id := range l.gen.Tk.VocabSize() {
		if s, ok := l.gen.Tk.Token(int32(id)); ok && len(s) > longest {
			longest = len(s)
		}
	}
	n := l.m.Context()
	if least := len(text) / longest; least >= n {
		return nil, newError(http.StatusBadRequest, "messages", "context_length_exceeded",
			fmt.Sprintf("This model's maximum context length is %d tokens; the prompt has at least %d", n, least))
	}
	return l.gen.PromptTokens(text, addBOS), nil
}
