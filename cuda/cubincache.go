package cuda

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"sync/atomic"
)

// The base module's cubin inflates from ~1 MB of xz to ~12 MB of ELF,
// about 0.3 s of the pure-Go decoder on the H200's host: every process
// would pay it before its first kernel. So the first process keeps the
// inflated image in the user's cache folder, named by the SHA-256 of the
// xz bytes it came from, with the SHA-256 of the image after it; later
// processes read it back and check the trailer. Anything wrong with the
// cache (no folder, a short or altered file) only means inflating again.
// $HARK_CUDA_CUBIN_CACHE names another folder; "off" disables it.

// inflations counts xz inflations (tests).
var inflations atomic.Int64

// cubinCacheDir is the cache folder, or "" when there is none.
func cubinCacheDir() string {
	switch d := os.Getenv("HARK_CUDA_CUBIN_CACHE"); d {
	case "off":
		return ""
	case "":
	default:
		return d
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(d, "hark", "cubin")
}

// cubinCachePath is where the image inflated from z is kept.
func cubinCachePath(z []byte) string {
	dir := cubinCacheDir()
	if dir == "" {
		return ""
	}
	h := sha256.Sum256(z)
	return filepath.Join(dir, hex.EncodeToString(h[:])+".cubin")
}

// cachedCubin returns the image inflated from z by an earlier process, or
// nil.
func cachedCubin(z []byte) []byte {
	p := cubinCachePath(z)
	if p == "" {
		return nil
	}
	b, err := os.ReadFile(p)
	if err != nil || len(b) < sha256.Size {
		return nil
	}
	img, sum := b[:len(b)-sha256.Size], b[len(b)-sha256.Size:]
	if h := sha256.Sum256(img); !bytes.Equal(h[:], sum) {
		return nil
	}
	return img
}

// storeCubin keeps img, inflated from z, for later processes: written
// under a temporary name and renamed, so a reader never sees half a file.
func storeCubin(z, img []byte) {
	p := cubinCachePath(z)
	if p == "" || os.MkdirAll(filepath.Dir(p), 0o755) != nil {
		return
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".cubin-*")
	if err != nil {
		return
	}
	h := sha256.Sum256(img)
	_, werr := f.Write(img)
	if werr == nil {
		_, werr = f.Write(h[:])
	}
	if cerr := f.Close(); werr == nil && cerr == nil && os.Rename(f.Name(), p) == nil {
		return
	}
	os.Remove(f.Name())
}
