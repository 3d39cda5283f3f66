package llm

import "strings"

// stopper finds stop strings in streamed text. Text that could be the
// start of a stop string is held back until the following text decides,
// so a stop string split over several tokens never reaches the output.
type stopper struct {
	stops []string
	held  string
}

// push adds text and returns what can be emitted; hit reports that a stop
// string was found (out is then the text before it, and the rest is
// dropped).
func (s *stopper) push(text string) (out string, hit bool) {
	s.held += text
	first := -1
	for _, st := range s.stops {
		if st == "" {
			continue
		}
		if i := strings.Index(s.held, st); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	if first >= 0 {
		out, s.held = s.held[:first], ""
		return out, true
	}
	keep := 0
	for _, st := range s.stops {
		for k := min(len(st)-1, len(s.held)); k > keep; k-- {
			if strings.HasSuffix(s.held, st[:k]) {
				keep = k
				break
			}
		}
	}
	n := len(s.held) - keep
	out, s.held = s.held[:n], s.held[n:]
	return out, false
}

// flush returns the held-back text at the end of a generation.
func (s *stopper) flush() string {
	out := s.held
	s.held = ""
	return out
}
