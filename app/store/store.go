// Package store is the app's embedded database: settings, history items
// (dictations and transcribed files) and chat conversations, in one SQLite
// file through the pure-Go modernc.org/sqlite driver.
package store

import (
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// ErrNotFound is returned for an id with no row.
var ErrNotFound = errors.New("store: not found")

// Store is an open database.
type Store struct {
	db *sql.DB
}

// Open opens (creating if needed) the database at path and brings its
// schema up to date.
func Open(path string) (*Store, error) {
	// WAL keeps readers (the UI listing history) from blocking the writer
	// (a transcription finishing); busy_timeout rides out the short
	// overlaps between the app's goroutines. synchronous=FULL: a row
	// reported written survives a power cut, which crash safety relies on.
	q := url.Values{}
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "foreign_keys(ON)")
	q.Add("_pragma", "synchronous(FULL)")
	// A file URI with the path escaped: a folder named "a?b", "a#b" or
	// "a%20b" would otherwise cut the name short or drop the pragmas.
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	// Only the user may read the history: create the file 0600 (SQLite
	// gives its -wal and -shm files the same mode) and tighten an old one.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	f.Close()
	if err := os.Chmod(abs, 0o600); err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	db, err := sql.Open("sqlite", fileURI(abs)+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	s := &Store{db: db}
	if err := s.migrate(); err != nil {
		db.Close()
		return nil, fmt.Errorf("store: %s: %w", path, err)
	}
	return s, nil
}

// fileURI is abs as an SQLite file: URI (its path percent-escaped).
func fileURI(abs string) string {
	return "file:" + (&url.URL{Path: filepath.ToSlash(abs)}).EscapedPath()
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// nowMs is the current time in unix milliseconds, the unit of every
// timestamp in the database.
func nowMs() int64 { return time.Now().UnixMilli() }

func notFound(err error, what string, id int64) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%w: %s %d", ErrNotFound, what, id)
	}
	return err
}
