package models

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
)

// hashesFile records, in the models folder, the sha256 of downloads whose
// catalog entry has no published hash (trust on first use): a later
// download of the same name is checked against it.
const hashesFile = "hashes.json"

// Recorded is the hash recorded for a model's first download.
type Recorded struct {
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	URL    string `json:"url,omitempty"`
}

var hashesMu sync.Mutex // serialises read-modify-write within the process

func (s *Store) readHashes() (map[string]Recorded, error) {
	m := map[string]Recorded{}
	b, err := os.ReadFile(filepath.Join(s.Dir, hashesFile))
	if errors.Is(err, os.ErrNotExist) {
		return m, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// RecordedHash returns the hash recorded for name's first download.
func (s *Store) RecordedHash(name string) (Recorded, bool) {
	hashesMu.Lock()
	defer hashesMu.Unlock()
	m, err := s.readHashes()
	if err != nil {
		return Recorded{}, false
	}
	r, ok := m[name]
	return r, ok
}

func (s *Store) updateHashes(f func(map[string]Recorded)) error {
	hashesMu.Lock()
	defer hashesMu.Unlock()
	m, err := s.readHashes()
	if err != nil {
		return err
	}
	f(m)
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.Dir, ".hashes-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(s.Dir, hashesFile))
}

func (s *Store) recordHash(name string, r Recorded) error {
	return s.updateHashes(func(m map[string]Recorded) { m[name] = r })
}

func (s *Store) forgetHash(name string) error {
	if _, ok := s.RecordedHash(name); !ok {
		return nil
	}
	return s.updateHashes(func(m map[string]Recorded) { delete(m, name) })
}
