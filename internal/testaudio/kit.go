package testaudio

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/internal/shared"
)

// Kit is the kit model (it recognizes the shared clips) on one CPU
// thread, closed when the test ends.
func Kit(t testing.TB) (*whisper.File, *whisper.Model) {
	return Model(t, shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
}

// Model is the Whisper model file at path on one CPU thread, closed when
// the test ends.
func Model(t testing.TB, path string) (*whisper.File, *whisper.Model) {
	f, err := whisper.OpenFile(path)
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	be := cpu.New(cpu.Options{Threads: 1})
	t.Cleanup(be.Close)
	m, err := f.Load(be, whisper.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { m.Close() })
	return f, m
}
