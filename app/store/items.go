package store

import (
	"database/sql"
	"strings"
)

// Item is a history row: a dictation or a transcribed file. Segments is
// the transcript's segments as JSON (the app owns their shape).
type Item struct {
	ID          int64
	Kind        string
	CreatedAt   int64 // unix ms
	UpdatedAt   int64
	Title       string
	SourcePath  string // the user's file (file items); never deleted by Hark
	AudioPath   string // a recording Hark owns, deleted with the item
	DurationMs  int64
	Status      string
	Text        string
	Segments    string
	Model       string
	Language    string
	Error       string
	Mode        string // the dictation mode used (migration 2)
	PromptTerms string // JSON list of the vocabulary terms put in the prompt
}

const itemCols = `id, kind, created_at, updated_at, title, source_path, audio_path, duration_ms,
	status, text, segments, model, language, error, mode, prompt_terms`

func scanItem(sc interface{ Scan(...any) error }) (Item, error) {
	var it Item
	err := sc.Scan(&it.ID, &it.Kind, &it.CreatedAt, &it.UpdatedAt, &it.Title, &it.SourcePath, &it.AudioPath,
		&it.DurationMs, &it.Status, &it.Text, &it.Segments, &it.Model, &it.Language, &it.Error, &it.Mode, &it.PromptTerms)
	return it, err
}

// InsertItem adds it (its ID is ignored) and returns the new row. A zero
// CreatedAt means now.
func (s *Store) InsertItem(it Item) (Item, error) {
	if it.CreatedAt == 0 {
		it.CreatedAt = nowMs()
	}
	it.UpdatedAt = it.CreatedAt
	if it.Segments == "" {
		it.Segments = "[]"
	}
	res, err := s.db.Exec(`INSERT INTO items(kind, created_at, updated_at, title, source_path, audio_path,
		duration_ms, status, text, segments, model, language, error) VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)`,
		it.Kind, it.CreatedAt, it.UpdatedAt, it.Title, it.SourcePath, it.AudioPath, it.DurationMs,
		it.Status, it.Text, it.Segments, it.Model, it.Language, it.Error)
	if err != nil {
		return Item{}, err
	}
	it.ID, err = res.LastInsertId()
	return it, err
}

// UpdateItem writes every field of it but ID and CreatedAt.
func (s *Store) UpdateItem(it Item) error {
	if it.Segments == "" {
		it.Segments = "[]"
	}
	res, err := s.db.Exec(`UPDATE items SET kind=?, updated_at=?, title=?, source_path=?, audio_path=?,
		duration_ms=?, status=?, text=?, segments=?, model=?, language=?, error=? WHERE id=?`,
		it.Kind, nowMs(), it.Title, it.SourcePath, it.AudioPath, it.DurationMs, it.Status, it.Text,
		it.Segments, it.Model, it.Language, it.Error, it.ID)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(sql.ErrNoRows, "item", it.ID)
	}
	return nil
}

// SetItemStatus changes only an item's status and error.
func (s *Store) SetItemStatus(id int64, status, errText string) error {
	return s.setItemColumns(id, "status=?, error=?", status, errText)
}

// setItemColumns runs UPDATE items SET set for row id, stamping
// updated_at; set is a constant column list of the callers', its values
// in args.
func (s *Store) setItemColumns(id int64, set string, args ...any) error {
	res, err := s.db.Exec(`UPDATE items SET `+set+`, updated_at=? WHERE id=?`, append(args, nowMs(), id)...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(sql.ErrNoRows, "item", id)
	}
	return nil
}

// Item returns the row with id.
func (s *Store) Item(id int64) (Item, error) {
	it, err := scanItem(s.db.QueryRow(`SELECT `+itemCols+` FROM items WHERE id=?`, id))
	return it, notFound(err, "item", id)
}

// DeleteItem removes the row (the caller removes its audio).
func (s *Store) DeleteItem(id int64) error {
	res, err := s.db.Exec(`DELETE FROM items WHERE id=?`, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(sql.ErrNoRows, "item", id)
	}
	return nil
}

// likeEscape makes s match literally inside a LIKE pattern (ESCAPE '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// Items lists rows newest first. Every word of query must occur
// (case-insensitively for ASCII) in the text or the title.
func (s *Store) Items(query string, limit, offset int) ([]Item, error) {
	if limit <= 0 || limit > 1000 {
		limit = 1000
	}
	if offset < 0 {
		offset = 0
	}
	var where []string
	var args []any
	for _, w := range strings.Fields(query) {
		p := "%" + likeEscape(w) + "%"
		where = append(where, `(text LIKE ? ESCAPE '\' OR title LIKE ? ESCAPE '\')`)
		args = append(args, p, p)
	}
	q := `SELECT ` + itemCols + ` FROM items`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?`
	args = append(args, limit, offset)
	return s.queryItems(q, args...)
}

// ItemsWithStatus lists the rows in any of statuses, oldest first.
func (s *Store) ItemsWithStatus(statuses ...string) ([]Item, error) {
	if len(statuses) == 0 {
		return nil, nil
	}
	args := make([]any, len(statuses))
	for i, st := range statuses {
		args[i] = st
	}
	q := `SELECT ` + itemCols + ` FROM items WHERE status IN (?` + strings.Repeat(",?", len(statuses)-1) + `) ORDER BY created_at, id`
	return s.queryItems(q, args...)
}

// ItemsBefore lists the rows created before ms (unix ms), oldest first.
func (s *Store) ItemsBefore(ms int64) ([]Item, error) {
	return s.queryItems(`SELECT `+itemCols+` FROM items WHERE created_at < ? ORDER BY created_at, id`, ms)
}

// AllItems lists every row, oldest first.
func (s *Store) AllItems() ([]Item, error) {
	return s.queryItems(`SELECT ` + itemCols + ` FROM items ORDER BY created_at, id`)
}

func (s *Store) queryItems(q string, args ...any) ([]Item, error) {
	rows, err := s.db.Query(q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Item
	for rows.Next() {
		it, err := scanItem(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}
