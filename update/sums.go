// Package update is Hark's update check: off until the user agrees; then
// it reads the releases feed (GitHub's releases API, or a mirror), tells
// whether a newer release exists, and verifies a download against the
// release's SHA256SUMS, whose ed25519 signature (SHA256SUMS.sig) must
// verify with the public key built into Hark. Installing in place is not
// done (a non-goal for now): the user opens the verified download.
//
// The signature contract, written here once and used by the release
// workflow (go run ./update/sumsign): SHA256SUMS.sig is the standard
// base64 encoding of ed25519.Sign(private key, the bytes of SHA256SUMS),
// followed by a newline.
package update

import (
	"bufio"
	"bytes"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// PublicKey is the release signing key's public half (base64); the
// private half is the repository secret HARK_RELEASE_SIGNING_KEY.
const PublicKey = "Dgm12vo+dEJjCezZRiZ5FbXN3jMoisx4Nstna0mUQGA="

// ErrBadSignature means SHA256SUMS is not signed by the release key.
var ErrBadSignature = errors.New("update: SHA256SUMS signature does not verify with Hark's release key")

// ParseKey decodes a base64 ed25519 public key.
func ParseKey(b64 string) (ed25519.PublicKey, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimSpace(b64))
	if err != nil || len(k) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("update: bad public key")
	}
	return ed25519.PublicKey(k), nil
}

// Sign returns the SHA256SUMS.sig contents for sums.
func Sign(priv ed25519.PrivateKey, sums []byte) []byte {
	return []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(priv, sums)) + "\n")
}

// VerifySums checks sig over sums with pub and returns the file → SHA-256
// table it signs.
func VerifySums(pub ed25519.PublicKey, sums, sig []byte) (map[string][32]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sig)))
	if err != nil || len(raw) != ed25519.SignatureSize || !ed25519.Verify(pub, sums, raw) {
		return nil, ErrBadSignature
	}
	return parseSums(sums)
}

// parseSums reads sha256sum's output: "<64 hex>  <name>" (or " *<name>"
// for binary mode), one file a line.
func parseSums(b []byte) (map[string][32]byte, error) {
	out := map[string][32]byte{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" {
			continue
		}
		if len(line) < 67 || line[64] != ' ' || (line[65] != ' ' && line[65] != '*') {
			return nil, fmt.Errorf("update: SHA256SUMS line %d: not '<sha256>  <file>'", n)
		}
		var h [32]byte
		if _, err := hex.Decode(h[:], []byte(line[:64])); err != nil {
			return nil, fmt.Errorf("update: SHA256SUMS line %d: %v", n, err)
		}
		out[line[66:]] = h
	}
	if len(out) == 0 {
		return nil, errors.New("update: SHA256SUMS lists no files")
	}
	return out, sc.Err()
}
