package llm

import "fmt"

// Truncate keeps only the first n tokens of the context, so a prompt that
// shares them (the next turn of a chat) reuses their KV cache and feeds
// only what follows. Cache entries past n are overwritten by later steps.
func (m *Model) Truncate(n int) error {
	if n < 0 || n > m.pos {
		return fmt.Errorf("llm: cannot truncate a context of %d tokens to %d", m.pos, n)
	}
	m.pos, m.toks = n, m.toks[:n]
	return nil
}
