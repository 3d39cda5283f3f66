package serve

import (
	"crypto/rand"
	"encoding/hex"
	"mime"
	"net/http"
	"os"
)

func modTime(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.ModTime().Unix()
}

// newID returns prefix followed by random hex, like OpenAI's object ids.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// requireType checks the request's media type (415 otherwise).
func requireType(r *http.Request, want string) error {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != want {
		got := r.Header.Get("Content-Type")
		if got == "" {
			got = "none"
		}
		return newError(http.StatusUnsupportedMediaType, "", "unsupported_media_type", "Content-Type must be "+want+", got "+got)
	}
	return nil
}
