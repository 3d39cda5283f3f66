package app

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// uploads are files a browser sent through the bridge, known to the
// services by an opaque id only: no filesystem path ever comes from a
// request. An upload is used once (Transcription.Add moves it under the
// recordings, Models.Import copies then deletes it).
type uploads struct {
	dir string
	mu  sync.Mutex
	m   map[string]upload
}

type upload struct{ path, name string }

// save stores r (a file the page sent, named name) under the data
// folder's uploads and returns its id.
func (u *uploads) save(name string, r io.Reader) (string, error) {
	name = safeName(name)
	if err := os.MkdirAll(u.dir, 0o700); err != nil {
		return "", err
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	id := "upload-" + hex.EncodeToString(b)
	dir := filepath.Join(u.dir, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	u.mu.Lock()
	u.m[id] = upload{path: path, name: name}
	u.mu.Unlock()
	return id, nil
}

// take hands an upload over to its one use.
func (u *uploads) take(id string) (upload, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	up, ok := u.m[id]
	if !ok {
		if strings.ContainsAny(id, `/\`) {
			return upload{}, errNotPath
		}
		return upload{}, fmt.Errorf("no upload %q (it was used already or the app restarted): send the file again", truncate(id, 80))
	}
	delete(u.m, id)
	return up, nil
}

// errNotPath answers a path where an upload id belongs.
var errNotPath = errors.New("files are given by upload id, not by path: drop or pick the file")

// discard deletes an upload's folder.
func (up upload) discard() { os.RemoveAll(filepath.Dir(up.path)) }

// clear deletes every upload left by an earlier run (their ids are gone).
func (u *uploads) clear() { os.RemoveAll(u.dir) }

// safeName keeps only the base name of what the browser sent, without
// separators, control characters or a leading dot.
func safeName(name string) string {
	name = filepath.Base(strings.ReplaceAll(name, `\`, "/"))
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '/' || r == ':' {
			return '_'
		}
		return r
	}, name)
	name = strings.TrimLeft(name, ".")
	if name == "" {
		name = "upload"
	}
	if len(name) > 200 {
		name = name[len(name)-200:]
	}
	return name
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
