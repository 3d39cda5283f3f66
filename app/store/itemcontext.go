package store

import "database/sql"

// SetItemContext records how an item was transcribed: the dictation mode
// ("" for none) and the vocabulary terms in the prompt (JSON list).
// UpdateItem leaves these alone, so a later save keeps them.
func (s *Store) SetItemContext(id int64, mode, promptTerms string) error {
	res, err := s.db.Exec(`UPDATE items SET mode=?, prompt_terms=?, updated_at=? WHERE id=?`, mode, promptTerms, nowMs(), id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(sql.ErrNoRows, "item", id)
	}
	return nil
}
