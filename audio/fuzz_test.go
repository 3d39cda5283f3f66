package audio

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzOpen feeds arbitrary bytes to the sniffer and the in-process decoders
// (ffmpeg is hidden from PATH): any outcome but a panic or a hang is fine.
func FuzzOpen(f *testing.F) {
	f.Setenv("PATH", f.TempDir())
	f.Add([]byte("RIFF\x24\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data\x04\x00\x00\x00\x01\x00\xff\xff"))
	f.Add([]byte("RIFF\x00\x00\x00\x00WAVEfmt \x28\x00\x00\x00\xfe\xff\x02\x00\x44\xac\x00\x00\x00\x00\x00\x00\x06\x00\x18\x00\x16\x00\x18\x00\x03\x00\x00\x00\x01\x00\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71data\xff\xff\xff\xff\x01\x02\x03\x04\x05\x06"))
	f.Add([]byte("fLaC\x00\x00\x00\x22\x10\x00\x10\x00\x00\x00\x00\x00\x00\x00\x03\xe8\x00\xf0\x00\x00\x00\x00"))
	f.Add([]byte("ID3\x03\x00\x00\x00\x00\x00\x00\xff\xfb\x90\x64" + string(bytes.Repeat([]byte{0}, 400))))
	f.Add([]byte("OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x1e\x01vorbis\x00\x00\x00\x00\x01\x80\x3e\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		t0 := time.Now()
		defer func() {
			if d := time.Since(t0); d > 5*time.Second {
				t.Fatalf("slow input: %v", d)
			}
		}()
		p := filepath.Join(t.TempDir(), "in")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := Open16k(p)
		if err != nil {
			return
		}
		defer s.Close()
		buf := make([]float32, 4096)
		for range 4096 { // bounded: corrupt input must not loop forever
			if _, err := s.Read(buf); err != nil {
				return
			}
		}
	})
}
