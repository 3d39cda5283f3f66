package store

import "fmt"

// migrations are applied in order; the database's user_version is how many
// have run. Only ever append: a shipped migration never changes.
var migrations = []string{
	// 1: the first schema.
	`CREATE TABLE settings (
		key   TEXT PRIMARY KEY,
		value TEXT NOT NULL
	);
	CREATE TABLE items (
		id          INTEGER PRIMARY KEY AUTOINCREMENT,
		kind        TEXT NOT NULL,
		created_at  INTEGER NOT NULL,
		updated_at  INTEGER NOT NULL,
		title       TEXT NOT NULL DEFAULT '',
		source_path TEXT NOT NULL DEFAULT '',
		audio_path  TEXT NOT NULL DEFAULT '',
		duration_ms INTEGER NOT NULL DEFAULT 0,
		status      TEXT NOT NULL,
		text        TEXT NOT NULL DEFAULT '',
		segments    TEXT NOT NULL DEFAULT '[]',
		model       TEXT NOT NULL DEFAULT '',
		language    TEXT NOT NULL DEFAULT '',
		error       TEXT NOT NULL DEFAULT ''
	);
	CREATE INDEX items_created ON items(created_at);
	CREATE INDEX items_status ON items(status);
	CREATE TABLE conversations (
		id         INTEGER PRIMARY KEY AUTOINCREMENT,
		title      TEXT NOT NULL DEFAULT '',
		model      TEXT NOT NULL DEFAULT '',
		created_at INTEGER NOT NULL,
		updated_at INTEGER NOT NULL
	);
	CREATE TABLE messages (
		id              INTEGER PRIMARY KEY AUTOINCREMENT,
		conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
		role            TEXT NOT NULL,
		content         TEXT NOT NULL DEFAULT '',
		created_at      INTEGER NOT NULL,
		stopped         INTEGER NOT NULL DEFAULT 0
	);
	CREATE INDEX messages_conv ON messages(conversation_id, id);`,
	// 2: the dictation mode and vocabulary prompt terms an item used.
	`ALTER TABLE items ADD COLUMN mode TEXT NOT NULL DEFAULT '';
	ALTER TABLE items ADD COLUMN prompt_terms TEXT NOT NULL DEFAULT '[]';`,
}

// migrate runs the migrations the database has not seen, each in its own
// transaction with the version bump, so a crash leaves a consistent
// version.
func (s *Store) migrate() error {
	var v int
	if err := s.db.QueryRow(`PRAGMA user_version`).Scan(&v); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("the database is version %d, newer than this app (%d); update Hark", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		tx, err := s.db.Begin()
		if err != nil {
			return err
		}
		if _, err := tx.Exec(migrations[i]); err != nil {
			_ = tx.Rollback() // the migration's error is the one to report
			return fmt.Errorf("migration %d: %w", i+1, err)
		}
		if _, err := tx.Exec(fmt.Sprintf(`PRAGMA user_version = %d`, i+1)); err != nil {
			_ = tx.Rollback() // the version's error is the one to report
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// Version is the schema version of the open database.
func (s *Store) Version() (int, error) {
	var v int
	err := s.db.QueryRow(`PRAGMA user_version`).Scan(&v)
	return v, err
}
