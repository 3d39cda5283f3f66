package store

import "database/sql"

// Conversation is a chat conversation.
type Conversation struct {
	ID        int64
	Title     string
	Model     string
	CreatedAt int64
	UpdatedAt int64
}

// Message is one turn of a conversation.
type Message struct {
	ID             int64
	ConversationID int64
	Role           string
	Content        string
	CreatedAt      int64
	Stopped        bool
}

// InsertConversation adds a conversation and returns it.
func (s *Store) InsertConversation(title, model string) (Conversation, error) {
	now := nowMs()
	res, err := s.db.Exec(`INSERT INTO conversations(title, model, created_at, updated_at) VALUES(?,?,?,?)`, title, model, now, now)
	if err != nil {
		return Conversation{}, err
	}
	id, err := res.LastInsertId()
	return Conversation{ID: id, Title: title, Model: model, CreatedAt: now, UpdatedAt: now}, err
}

// Conversation returns the conversation with id.
func (s *Store) Conversation(id int64) (Conversation, error) {
	var c Conversation
	err := s.db.QueryRow(`SELECT id, title, model, created_at, updated_at FROM conversations WHERE id=?`, id).
		Scan(&c.ID, &c.Title, &c.Model, &c.CreatedAt, &c.UpdatedAt)
	return c, notFound(err, "conversation", id)
}

// Conversations lists conversations, most recently updated first.
func (s *Store) Conversations() ([]Conversation, error) {
	rows, err := s.db.Query(`SELECT id, title, model, created_at, updated_at FROM conversations ORDER BY updated_at DESC, id DESC`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Conversation
	for rows.Next() {
		var c Conversation
		if err := rows.Scan(&c.ID, &c.Title, &c.Model, &c.CreatedAt, &c.UpdatedAt); err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// UpdateConversation sets title and model and touches updated_at.
func (s *Store) UpdateConversation(id int64, title, model string) error {
	res, err := s.db.Exec(`UPDATE conversations SET title=?, model=?, updated_at=? WHERE id=?`, title, model, nowMs(), id)
	return affected(res, err, "conversation", id)
}

// DeleteConversation removes a conversation and its messages.
func (s *Store) DeleteConversation(id int64) error {
	res, err := s.db.Exec(`DELETE FROM conversations WHERE id=?`, id)
	return affected(res, err, "conversation", id)
}

// InsertMessage appends a message to its conversation (and touches the
// conversation).
func (s *Store) InsertMessage(m Message) (Message, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return Message{}, err
	}
	defer func() { _ = tx.Rollback() }() // after Commit, a no-op (sql.ErrTxDone)
	m.CreatedAt = nowMs()
	res, err := tx.Exec(`INSERT INTO messages(conversation_id, role, content, created_at, stopped) VALUES(?,?,?,?,?)`,
		m.ConversationID, m.Role, m.Content, m.CreatedAt, m.Stopped)
	if err != nil {
		return Message{}, err
	}
	if m.ID, err = res.LastInsertId(); err != nil {
		return Message{}, err
	}
	if _, err := tx.Exec(`UPDATE conversations SET updated_at=? WHERE id=?`, m.CreatedAt, m.ConversationID); err != nil {
		return Message{}, err
	}
	return m, tx.Commit()
}

// UpdateMessage sets a message's content and stopped flag.
func (s *Store) UpdateMessage(id int64, content string, stopped bool) error {
	res, err := s.db.Exec(`UPDATE messages SET content=?, stopped=? WHERE id=?`, content, stopped, id)
	return affected(res, err, "message", id)
}

// Messages lists a conversation's messages in order.
func (s *Store) Messages(conv int64) ([]Message, error) {
	rows, err := s.db.Query(`SELECT id, conversation_id, role, content, created_at, stopped FROM messages
		WHERE conversation_id=? ORDER BY id`, conv)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Message
	for rows.Next() {
		var m Message
		if err := rows.Scan(&m.ID, &m.ConversationID, &m.Role, &m.Content, &m.CreatedAt, &m.Stopped); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

func affected(res sql.Result, err error, what string, id int64) error {
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return notFound(sql.ErrNoRows, what, id)
	}
	return nil
}
