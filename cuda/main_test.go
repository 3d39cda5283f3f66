package cuda

import (
	"os"
	"testing"
)

// The package's tests keep inflated cubins in a folder of their own, not
// the user's cache (cubincache.go).
func TestMain(m *testing.M) {
	if os.Getenv("HARK_CUDA_CUBIN_CACHE") == "" {
		dir, err := os.MkdirTemp("", "hark-cubin-cache-")
		if err != nil {
			panic(err)
		}
		os.Setenv("HARK_CUDA_CUBIN_CACHE", dir)
		code := m.Run()
		os.RemoveAll(dir)
		os.Exit(code)
	}
	os.Exit(m.Run())
}
