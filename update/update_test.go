package update

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// feed is a local releases feed serving one release (tag) with a dmg, its
// SHA256SUMS and the signature made with priv; serve overrides what the
// dmg URL answers (a tampered download).
type feed struct {
	tag      string
	dmg      []byte
	served   []byte // what /dl/Hark.dmg returns (dmg unless tampered)
	priv     ed25519.PrivateKey
	sigBytes []byte // overrides the signature when set
}

func (f *feed) server(t *testing.T) *httptest.Server {
	sum := sha256.Sum256(f.dmg)
	sums := []byte(hex.EncodeToString(sum[:]) + "  Hark.dmg\n")
	sig := Sign(f.priv, sums)
	if f.sigBytes != nil {
		sig = f.sigBytes
	}
	served := f.served
	if served == nil {
		served = f.dmg
	}
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/repos/harkapp/hark/releases/latest", func(w http.ResponseWriter, r *http.Request) {
		asset := func(n string, size int) map[string]any {
			return map[string]any{"name": n, "browser_download_url": srv.URL + "/dl/" + n, "size": size}
		}
		json.NewEncoder(w).Encode(map[string]any{
			"tag_name": f.tag, "name": "Hark " + f.tag, "body": "What's new", "html_url": srv.URL + "/rel",
			"assets": []any{asset("Hark.dmg", len(f.dmg)), asset("SHA256SUMS", len(sums)), asset("SHA256SUMS.sig", len(sig))},
		})
	})
	mux.HandleFunc("/dl/Hark.dmg", func(w http.ResponseWriter, r *http.Request) { w.Write(served) })
	mux.HandleFunc("/dl/SHA256SUMS", func(w http.ResponseWriter, r *http.Request) { w.Write(sums) })
	mux.HandleFunc("/dl/SHA256SUMS.sig", func(w http.ResponseWriter, r *http.Request) { w.Write(sig) })
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func keys(t *testing.T) (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, err := ed25519.GenerateKey(nil)
	require.NoError(t, err)
	return pub, priv
}

func TestCheckVersions(t *testing.T) {
	pub, priv := keys(t)
	f := &feed{tag: "v1.4.0", dmg: []byte("dmg"), priv: priv}
	srv := f.server(t)
	for _, tc := range []struct {
		current string
		newer   bool
	}{{"1.3.9", true}, {"1.4.0", false}, {"1.5.0", false}, {"1.4.0-rc.1", true}, {"dev", true}} {
		c := &Checker{Feed: srv.URL + "/repos/harkapp/hark/releases/latest", Current: tc.current, Key: pub}
		rel, newer, err := c.Check(context.Background())
		require.NoError(t, err)
		require.Equal(t, tc.newer, newer, "current %s", tc.current)
		require.Equal(t, "1.4.0", rel.Version)
		require.Equal(t, "What's new", rel.Notes)
	}
}

func TestDownloadVerified(t *testing.T) {
	pub, priv := keys(t)
	f := &feed{tag: "v2.0.0", dmg: []byte("the real disk image"), priv: priv}
	srv := f.server(t)
	c := &Checker{Feed: srv.URL + "/repos/harkapp/hark/releases/latest", Current: "1.0.0", Key: pub}
	rel, newer, err := c.Check(context.Background())
	require.NoError(t, err)
	require.True(t, newer)
	dir := t.TempDir()
	p, err := c.Download(context.Background(), rel, "Hark.dmg", dir)
	require.NoError(t, err)
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	require.Equal(t, f.dmg, b)
	_, err = c.Download(context.Background(), rel, "../evil", dir)
	require.Error(t, err)
}

func TestDownloadBadSignature(t *testing.T) {
	pub, _ := keys(t)
	_, other := keys(t)
	for name, f := range map[string]*feed{
		"other key": {tag: "v2.0.0", dmg: []byte("x"), priv: other},
		"garbage":   {tag: "v2.0.0", dmg: []byte("x"), priv: other, sigBytes: []byte("not base64!\n")},
	} {
		srv := f.server(t)
		c := &Checker{Feed: srv.URL + "/repos/harkapp/hark/releases/latest", Current: "1.0.0", Key: pub}
		rel, _, err := c.Check(context.Background())
		require.NoError(t, err)
		dir := t.TempDir()
		_, err = c.Download(context.Background(), rel, "Hark.dmg", dir)
		require.ErrorIs(t, err, ErrBadSignature, name)
		left, _ := os.ReadDir(dir)
		require.Empty(t, left, "%s: nothing may be left of a refused download", name)
	}
}

func TestDownloadTampered(t *testing.T) {
	pub, priv := keys(t)
	f := &feed{tag: "v2.0.0", dmg: []byte("the real disk image"), served: []byte("the evil disk image"), priv: priv}
	srv := f.server(t)
	c := &Checker{Feed: srv.URL + "/repos/harkapp/hark/releases/latest", Current: "1.0.0", Key: pub}
	rel, _, err := c.Check(context.Background())
	require.NoError(t, err)
	dir := t.TempDir()
	_, err = c.Download(context.Background(), rel, "Hark.dmg", dir)
	require.ErrorContains(t, err, "does not match")
	left, _ := os.ReadDir(dir)
	require.Empty(t, left, "a tampered download is deleted")
	_, err = os.Stat(filepath.Join(dir, "Hark.dmg"))
	require.True(t, os.IsNotExist(err))
}

func TestBuiltInKey(t *testing.T) {
	k, err := ParseKey(PublicKey)
	require.NoError(t, err)
	require.Len(t, k, ed25519.PublicKeySize)
	_, err = ParseKey("AAAA")
	require.Error(t, err)
}

func TestParseSums(t *testing.T) {
	_, err := parseSums([]byte("nonsense\n"))
	require.Error(t, err)
	_, err = parseSums([]byte("\n"))
	require.Error(t, err)
	h := fmt.Sprintf("%064x", 1)
	m, err := parseSums([]byte(h + "  a.zip\n" + h + " *b.dmg\n"))
	require.NoError(t, err)
	require.Len(t, m, 2)
}
