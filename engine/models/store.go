// Package models manages the models folder: where models live, how a
// --model argument (a file path or a model's name) is resolved, and the
// names that are allowed.
package models

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
)

// EnvDir overrides the default models folder.
const EnvDir = "HARK_MODELS"

// Extensions of model files, in the order a bare name is looked up.
var Extensions = []string{".bin", ".gguf"}

// DefaultDir is the models folder in the user's application-support
// folder: ~/Library/Application Support/Hark/models on macOS,
// $XDG_DATA_HOME/hark/models (~/.local/share/hark/models) elsewhere.
func DefaultDir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("models: no home folder: %w", err)
	}
	if runtime.GOOS == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "Hark", "models"), nil
	}
	if x := os.Getenv("XDG_DATA_HOME"); x != "" {
		return filepath.Join(x, "hark", "models"), nil
	}
	return filepath.Join(home, ".local", "share", "hark", "models"), nil
}

// validName: letters, digits, '.', '_' and '-', starting with a letter or
// digit, so no name can leave the folder or hide as a dot file.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// ValidateName rejects names that could escape the models folder.
func ValidateName(name string) error {
	if !validName.MatchString(name) || strings.Contains(name, "..") {
		return fmt.Errorf("models: %q is not a valid model name (letters, digits, '.', '_' and '-')", name)
	}
	return nil
}

// Store is a models folder.
type Store struct{ Dir string }

// Open returns the store at dir, or the default folder when dir is empty.
func Open(dir string) (*Store, error) {
	if dir == "" {
		var err error
		if dir, err = DefaultDir(); err != nil {
			return nil, err
		}
	}
	return &Store{Dir: dir}, nil
}

// ErrNotFound is returned for a name with no file in the store.
var ErrNotFound = errors.New("models: no such model")

// Path returns the file of the model called name.
func (s *Store) Path(name string) (string, error) {
	if err := ValidateName(name); err != nil {
		return "", err
	}
	for _, ext := range Extensions {
		p := filepath.Join(s.Dir, name+ext)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w %q in %s", ErrNotFound, name, s.Dir)
}

// Entry is a model file in the store.
type Entry struct {
	Name string
	Path string
	Size int64
}

// List returns the models in the store, by name. A missing folder is an
// empty store.
func (s *Store) List() ([]Entry, error) {
	des, err := os.ReadDir(s.Dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, de := range des {
		ext := filepath.Ext(de.Name())
		name := strings.TrimSuffix(de.Name(), ext)
		if !de.Type().IsRegular() || ValidateName(name) != nil {
			continue
		}
		for _, e := range Extensions {
			if ext == e {
				info, err := de.Info()
				if err != nil {
					return nil, err
				}
				out = append(out, Entry{Name: name, Path: filepath.Join(s.Dir, de.Name()), Size: info.Size()})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Resolve turns a --model argument into a file: an existing file path as
// given, else the name of a model in the store.
func (s *Store) Resolve(arg string) (string, error) {
	if arg == "" {
		return "", errors.New("no model given")
	}
	if st, err := os.Stat(arg); err == nil && !st.IsDir() {
		return arg, nil
	}
	if strings.ContainsAny(arg, `/\`) || filepath.Ext(arg) == ".bin" || filepath.Ext(arg) == ".gguf" {
		_, err := os.Stat(arg)
		return "", err // a path that does not exist: say so
	}
	return s.Path(arg)
}
