package bridge

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// serveUpload stores a dropped file under UploadDir, so the services can
// read it by path as they do for the Wails window's native file drops.
func (b *Bridge) serveUpload(w http.ResponseWriter, r *http.Request) {
	opts := b.options()
	if opts.UploadDir == "" {
		writeJSON(w, http.StatusNotFound, reply{Error: "uploads are disabled"})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, opts.MaxUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		writeJSON(w, http.StatusBadRequest, reply{Error: "upload: " + err.Error()})
		return
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			writeJSON(w, http.StatusBadRequest, reply{Error: `upload: no "file" part`})
			return
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, reply{Error: "upload: " + err.Error()})
			return
		}
		if part.FormName() != "file" {
			part.Close()
			continue
		}
		path, err := store(opts.UploadDir, part.FileName(), part)
		part.Close()
		if err != nil {
			code := http.StatusInternalServerError
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				code = http.StatusRequestEntityTooLarge
			}
			writeJSON(w, code, reply{Error: "upload: " + err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, reply{Result: path})
		return
	}
}

// store writes r to a fresh folder under UploadDir keeping the file's base
// name (the services show it as the job's title).
func store(uploadDir, name string, r io.Reader) (string, error) {
	name = safeName(name)
	if err := os.MkdirAll(uploadDir, 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(uploadDir, time.Now().Format("20060102-150405-"))
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", err
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		os.RemoveAll(dir)
		return "", err
	}
	if err := f.Close(); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return path, nil
}

// safeName keeps only the base name of what the browser sent, without
// separators or a leading dot.
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

// serveRecording streams a recording's audio; http.ServeContent answers
// Range requests, which <audio> uses to seek.
func (b *Bridge) serveRecording(w http.ResponseWriter, r *http.Request) {
	recording := b.options().Recording
	if recording == nil {
		http.NotFound(w, r)
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		http.Error(w, "bad recording id", http.StatusBadRequest)
		return
	}
	path, err := recording(id)
	if err != nil {
		http.Error(w, fmt.Sprintf("recording %d: %v", id, err), http.StatusNotFound)
		return
	}
	f, err := os.Open(path)
	if err != nil {
		http.Error(w, fmt.Sprintf("recording %d: audio not found", id), http.StatusNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.IsDir() {
		http.Error(w, fmt.Sprintf("recording %d: audio not found", id), http.StatusNotFound)
		return
	}
	if strings.EqualFold(filepath.Ext(path), ".wav") {
		w.Header().Set("Content-Type", "audio/wav")
	}
	http.ServeContent(w, r, filepath.Base(path), st.ModTime(), f)
}
