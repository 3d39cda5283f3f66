package models

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
)

// catalog.json lists the models Hark supports. Sizes and sha256 digests
// come only from published sources, named in each entry's source; an
// entry without a digest is unverified and its first download's digest is
// recorded (see hashes.go).
//
//go:embed catalog.json
var catalogJSON []byte

// CatalogEntry is one downloadable model.
type CatalogEntry struct {
	Name     string `json:"name"`
	Task     Task   `json:"task"`
	Size     int64  `json:"size"`      // bytes on disk; 0 when no source gives it
	MemoryMB int    `json:"memory_mb"` // approximate memory to run it
	Notes    string `json:"notes"`
	URL      string `json:"url"`
	SHA256   string `json:"sha256"` // empty: unverified
	Source   string `json:"source"` // where Size and SHA256 were published
	// License, when set, is shown and must be accepted before the first
	// download (Gemma's terms, for example).
	License *License `json:"license,omitempty"`
}

// License names a model licence and where it is published.
type License struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// LicenseError refuses a download whose licence was not accepted.
type LicenseError struct {
	Model   string
	License License
}

func (e *LicenseError) Error() string {
	return fmt.Sprintf("models: %s is published under the %s (%s): accept it before downloading", e.Model, e.License.Name, e.License.URL)
}

// CheckLicense returns a *LicenseError when the entry has a licence and
// accepted is false.
func (e CatalogEntry) CheckLicense(accepted bool) error {
	if e.License == nil || accepted {
		return nil
	}
	return &LicenseError{Model: e.Name, License: *e.License}
}

// Verified reports whether the entry has a published digest.
func (e CatalogEntry) Verified() bool { return e.SHA256 != "" }

// Request is the download request for the entry.
func (e CatalogEntry) Request() Request {
	return Request{Name: e.Name, URL: e.URL, SHA256: e.SHA256, Size: e.Size}
}

// Catalog returns the built-in catalog, whispers first, each group by name.
func Catalog() []CatalogEntry {
	c, err := parseCatalog(catalogJSON)
	if err != nil {
		panic(err) // the embedded file is checked by the tests
	}
	return c
}

func parseCatalog(b []byte) ([]CatalogEntry, error) {
	var doc struct {
		Models []CatalogEntry `json:"models"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("models: catalog: %w", err)
	}
	return doc.Models, nil
}

// Lookup returns the catalog entry called name.
func Lookup(name string) (CatalogEntry, bool) {
	for _, e := range Catalog() {
		if e.Name == name {
			return e, true
		}
	}
	return CatalogEntry{}, false
}

// Recommend picks, for a machine with totalRAM bytes, the largest speech
// and chat models whose memory needs each fit in a third of RAM, so both
// can be loaded with room left for the system. Speech models are the
// multilingual quantized files (the sweet spot on CPU), chat models the
// Q4_K_M files. An empty entry means nothing fits.
func Recommend(totalRAM int64) (speech, chat CatalogEntry) {
	budget := int(totalRAM / 3 / 1e6)
	pick := func(task Task, allow func(CatalogEntry) bool) CatalogEntry {
		var best CatalogEntry
		for _, e := range Catalog() {
			if e.Task != task || !allow(e) || e.MemoryMB > budget {
				continue
			}
			if best.Name == "" || better(e, best) {
				best = e
			}
		}
		return best
	}
	speech = pick(Transcribe, func(e CatalogEntry) bool {
		return strings.Contains(e.Name, "-q") && !strings.Contains(e.Name, ".en")
	})
	// A first-run pick never needs a licence prompt.
	chat = pick(Chat, func(e CatalogEntry) bool { return strings.HasSuffix(e.Name, "q4_k_m") && e.License == nil })
	return speech, chat
}

func better(a, b CatalogEntry) bool {
	if a.MemoryMB != b.MemoryMB {
		return a.MemoryMB > b.MemoryMB
	}
	return a.Verified() && !b.Verified()
}
