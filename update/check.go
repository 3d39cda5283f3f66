package update

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/harkapp/hark/internal/version"
)

// DefaultFeed is the project's latest-release endpoint (GitHub's releases
// API); mirrors and tests set Checker.Feed.
const DefaultFeed = "https://api.github.com/repos/harkapp/hark/releases/latest"

// Bounds on what the feed and the downloads may send.
const (
	maxFeedBytes  = 1 << 20
	maxSumsBytes  = 64 << 10
	maxAssetBytes = 2 << 30
)

// Release is the feed's newest release.
type Release struct {
	Version string  `json:"version"` // without the tag's "v"
	Name    string  `json:"name"`
	Notes   string  `json:"notes"`
	Page    string  `json:"page"` // the release's web page
	Assets  []Asset `json:"assets"`
}

// Asset is one downloadable file of a release.
type Asset struct {
	Name string `json:"name"`
	URL  string `json:"url"`
	Size int64  `json:"size"`
}

// Checker reads the feed and verifies downloads.
type Checker struct {
	Feed    string            // DefaultFeed when empty
	Current string            // the running version (version.Version)
	Key     ed25519.PublicKey // the release key (ParseKey(PublicKey))
	Client  *http.Client      // a 30 s client when nil
}

func (c *Checker) client() *http.Client {
	if c.Client != nil {
		return c.Client
	}
	return &http.Client{Timeout: 30 * time.Second}
}

// githubRelease is the part of GitHub's release object that is read.
type githubRelease struct {
	TagName    string `json:"tag_name"`
	Name       string `json:"name"`
	Body       string `json:"body"`
	HTMLURL    string `json:"html_url"`
	Draft      bool   `json:"draft"`
	Prerelease bool   `json:"prerelease"`
	Assets     []struct {
		Name string `json:"name"`
		URL  string `json:"browser_download_url"`
		Size int64  `json:"size"`
	} `json:"assets"`
}

// Check reads the feed; newer reports whether its release is newer than
// Current. A "dev" build is older than every release.
func (c *Checker) Check(ctx context.Context) (rel *Release, newer bool, err error) {
	feed := c.Feed
	if feed == "" {
		feed = DefaultFeed
	}
	b, err := c.get(ctx, feed, maxFeedBytes)
	if err != nil {
		return nil, false, err
	}
	var g githubRelease
	if err := json.Unmarshal(b, &g); err != nil {
		return nil, false, fmt.Errorf("update: feed: %w", err)
	}
	if g.Draft || g.Prerelease {
		return nil, false, errors.New("update: the feed's latest release is a draft or pre-release")
	}
	v, err := version.Parse(g.TagName)
	if err != nil {
		return nil, false, fmt.Errorf("update: feed: %w", err)
	}
	rel = &Release{Version: v.String(), Name: g.Name, Notes: g.Body, Page: g.HTMLURL}
	for _, a := range g.Assets {
		rel.Assets = append(rel.Assets, Asset{Name: a.Name, URL: a.URL, Size: a.Size})
	}
	cur, err := version.Parse(c.Current)
	if err != nil { // dev builds
		return rel, true, nil
	}
	return rel, v.Compare(cur) > 0, nil
}

// Download fetches the release's SHA256SUMS and SHA256SUMS.sig, checks
// the signature with Key, then downloads the asset named name into dir
// and checks its SHA-256 against the signed table. Only a verified file
// is left in dir (under its own name); its path is returned.
func (c *Checker) Download(ctx context.Context, rel *Release, name, dir string) (string, error) {
	find := func(n string) (Asset, error) {
		for _, a := range rel.Assets {
			if a.Name == n {
				return a, nil
			}
		}
		return Asset{}, fmt.Errorf("update: release %s has no %s", rel.Version, n)
	}
	if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("update: bad asset name %q", name)
	}
	asset, err := find(name)
	if err != nil {
		return "", err
	}
	sumsA, err := find("SHA256SUMS")
	if err != nil {
		return "", err
	}
	sigA, err := find("SHA256SUMS.sig")
	if err != nil {
		return "", err
	}
	sums, err := c.get(ctx, sumsA.URL, maxSumsBytes)
	if err != nil {
		return "", err
	}
	sig, err := c.get(ctx, sigA.URL, maxSumsBytes)
	if err != nil {
		return "", err
	}
	table, err := VerifySums(c.Key, sums, sig)
	if err != nil {
		return "", err
	}
	want, ok := table[name]
	if !ok {
		return "", fmt.Errorf("update: %s is not in SHA256SUMS", name)
	}

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, asset.URL, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.client().Do(req)
	if err != nil {
		return "", fmt.Errorf("update: download: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("update: download %s: HTTP %d", name, resp.StatusCode)
	}
	tmp, err := os.CreateTemp(dir, ".hark-download-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, maxAssetBytes+1))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("update: download %s: %w", name, err)
	}
	if n > maxAssetBytes {
		return "", fmt.Errorf("update: download %s: larger than %d bytes", name, int64(maxAssetBytes))
	}
	var got [32]byte
	copy(got[:], h.Sum(nil))
	if got != want {
		return "", fmt.Errorf("update: %s does not match its SHA-256 in SHA256SUMS (tampered or truncated download)", name)
	}
	dst := filepath.Join(dir, name)
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", err
	}
	return dst, nil
}

// get reads a URL's body, at most limit bytes.
func (c *Checker) get(ctx context.Context, url string, limit int64) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("User-Agent", "hark/"+c.Current)
	resp, err := c.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("update: %s: HTTP %d", url, resp.StatusCode)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("update: %w", err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("update: %s: answer larger than %d bytes", url, limit)
	}
	return b, nil
}
