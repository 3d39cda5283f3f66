package models

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Import copies the model file src into the store under its base name
// without extension and returns that name. The file is inspected first and
// refused, with the reason, when Hark cannot run it. The copy goes through a
// temporary file renamed into place, so a crash never leaves a half model.
func (s *Store) Import(src string) (string, error) {
	info, err := Inspect(src)
	if err != nil {
		return "", err
	}
	base := filepath.Base(src)
	name := strings.TrimSuffix(base, filepath.Ext(base))
	if err := ValidateName(name); err != nil {
		return "", fmt.Errorf("%w; rename the file before importing it", err)
	}
	if p, err := s.Path(name); err == nil {
		return "", fmt.Errorf("models: a model called %q already exists (%s); remove it first", name, p)
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return "", err
	}
	if err := copyAtomic(src, filepath.Join(s.Dir, name+ext(info.Format))); err != nil {
		return "", err
	}
	return name, nil
}

func copyAtomic(src, dst string) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".import-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = io.Copy(tmp, in); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}

// Remove deletes the model called name, with its partial download if any.
// Its recorded hash stays (see Forget): a later download of the same name
// must still match what was first trusted, or a removal would re-open trust
// on first use to whatever the server now sends.
func (s *Store) Remove(name string) error {
	p, err := s.Path(name)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil {
		return err
	}
	if err := os.Remove(s.partialPath(name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// Forget drops the hash recorded for name's first download, so that its
// next download is trusted anew (`hark models rm --forget`).
func (s *Store) Forget(name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	return s.forgetHash(name)
}
