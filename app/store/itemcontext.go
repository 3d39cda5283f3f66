package store

// SetItemContext records how an item was transcribed: the dictation mode
// ("" for none) and the vocabulary terms in the prompt (JSON list).
// UpdateItem leaves these alone, so a later save keeps them.
func (s *Store) SetItemContext(id int64, mode, promptTerms string) error {
	return s.setItemColumns(id, "mode=?, prompt_terms=?", mode, promptTerms)
}
