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
)

// serveUpload hands a dropped or picked file to the app, which keeps it
// under the data folder and answers an opaque id (never a path) for
// Transcription.Add or Models.Import. At most MaxUpload bytes, and
// uploadRate uploads a minute: a page cannot fill the disk.
func (b *Bridge) serveUpload(w http.ResponseWriter, r *http.Request) {
	opts := b.options()
	if opts.SaveUpload == nil {
		writeJSON(w, http.StatusNotFound, reply{Error: "uploads are disabled"})
		return
	}
	if !b.uploads.Allow() {
		writeJSON(w, http.StatusTooManyRequests, reply{Error: fmt.Sprintf("upload: more than %d files a minute; wait a moment", uploadRate)})
		return
	}
	if r.ContentLength > opts.MaxUpload {
		writeJSON(w, http.StatusRequestEntityTooLarge, reply{Error: fmt.Sprintf("upload: larger than the %d MiB limit", opts.MaxUpload>>20)})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, opts.MaxUpload)
	mr, err := r.MultipartReader()
	if err != nil {
		writeJSON(w, http.StatusBadRequest, reply{Error: "upload: " + b.errText(err)})
		return
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			writeJSON(w, http.StatusBadRequest, reply{Error: `upload: no "file" part`})
			return
		}
		if err != nil {
			writeJSON(w, http.StatusBadRequest, reply{Error: "upload: " + b.errText(err)})
			return
		}
		if part.FormName() != "file" {
			part.Close()
			continue
		}
		id, err := opts.SaveUpload(part.FileName(), part)
		part.Close()
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				writeJSON(w, http.StatusRequestEntityTooLarge, reply{Error: fmt.Sprintf("upload: larger than the %d MiB limit", opts.MaxUpload>>20)})
				return
			}
			writeJSON(w, http.StatusInternalServerError, reply{Error: "upload: could not keep the file: " + b.errText(err)})
			return
		}
		writeJSON(w, http.StatusOK, reply{Result: id})
		return
	}
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
		http.Error(w, fmt.Sprintf("recording %d: %s", id, b.errText(err)), http.StatusNotFound)
		return
	}
	// A link planted in recordings/ must not turn /media into a reader of
	// any file: the last path element is opened without following links
	// (a user's own linked source file is resolved when it is served, see
	// History.AudioFile), and only a regular file is served.
	f, err := os.OpenFile(path, os.O_RDONLY|oNoFollow, 0)
	if err != nil {
		http.Error(w, fmt.Sprintf("recording %d: audio not found", id), http.StatusNotFound)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if lst, lerr := os.Lstat(path); err != nil || lerr != nil || !st.Mode().IsRegular() || !lst.Mode().IsRegular() {
		http.Error(w, fmt.Sprintf("recording %d: audio not found", id), http.StatusNotFound)
		return
	}
	if strings.EqualFold(filepath.Ext(path), ".wav") {
		w.Header().Set("Content-Type", "audio/wav")
	}
	http.ServeContent(w, r, filepath.Base(path), st.ModTime(), f)
}
