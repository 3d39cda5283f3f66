package models

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// Every model-like file in the shared data is accepted or refused with
// the right reason.
func TestImportSharedFiles(t *testing.T) {
	s := &Store{Dir: filepath.Join(t.TempDir(), "models")}
	for _, c := range []struct {
		path []string
		name string // "" when refused
		task Task
		why  string
	}{
		{path: []string{"models", "stories260K.gguf"}, name: "stories260K", task: Chat},
		{path: []string{"whisper-kit", "models", "ggml-kit-tiny.en-f16.bin"}, name: "ggml-kit-tiny.en-f16", task: Transcribe},
		{path: []string{"whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"}, name: "ggml-kit-tiny.en-q8_0", task: Transcribe},
		{path: []string{"llm-kit", "gguf-vocab", "ggml-vocab-llama-spm.gguf"}, why: "vocabulary-only GGUF"},
		{path: []string{"llm-kit", "gguf-vocab", "ggml-vocab-phi-3.gguf"}, why: "vocabulary-only GGUF"},
		{path: []string{"models", "stories260K.llama2c.bin"}, why: "not a GGUF or whisper.cpp GGML model file"},
		{path: []string{"models", "tok512.llama2c.bin"}, why: "not a GGUF or whisper.cpp GGML model file"},
		{path: []string{"models", "SOURCES.md"}, why: "not a GGUF or whisper.cpp GGML model file"},
		{path: []string{"llm-kit", "ggml-quants", "q4_K.quant.bin"}, why: "not a GGUF or whisper.cpp GGML model file"},
	} {
		src := shared.Path(t, c.path...)
		info, ierr := Inspect(src)
		name, err := s.Import(src)
		if c.why != "" {
			require.ErrorIs(t, err, ErrUnsupported, src)
			require.ErrorContains(t, err, c.why, src)
			require.ErrorIs(t, ierr, ErrUnsupported)
			continue
		}
		require.NoError(t, err, src)
		require.NoError(t, ierr, src)
		require.Equal(t, c.task, info.Task)
		require.Equal(t, c.name, name)
		p, err := s.Resolve(name)
		require.NoError(t, err)
		a, _ := os.ReadFile(src)
		b, _ := os.ReadFile(p)
		require.Equal(t, sha(a), sha(b), "the copy is exact")
	}
	list, err := s.List()
	require.NoError(t, err)
	require.Len(t, list, 3)
	// No temporary files are left behind.
	des, err := os.ReadDir(s.Dir)
	require.NoError(t, err)
	require.Len(t, des, 3)

	// A second import of the same name is refused rather than overwriting.
	_, err = s.Import(shared.Path(t, "models", "stories260K.gguf"))
	require.ErrorContains(t, err, "already exists")
}

// An unsupported architecture is refused with its name.
func TestImportUnsupportedArch(t *testing.T) {
	b, err := os.ReadFile(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	// Same-length replacement of the architecture value keeps the file valid.
	i := indexOf(b, []byte("llama"), []byte("general.architecture"))
	require.Positive(t, i)
	copy(b[i:], "gemma")
	src := filepath.Join(t.TempDir(), "gem.gguf")
	require.NoError(t, os.WriteFile(src, b, 0o644))
	_, err = (&Store{Dir: t.TempDir()}).Import(src)
	require.ErrorIs(t, err, ErrUnsupported)
	require.ErrorContains(t, err, `architecture "gemma" is not supported`)
}

// indexOf finds the first val after key.
func indexOf(b, val, key []byte) int {
	for i := 0; i+len(key) <= len(b); i++ {
		if string(b[i:i+len(key)]) == string(key) {
			for j := i + len(key); j+len(val) <= len(b) && j < i+len(key)+64; j++ {
				if string(b[j:j+len(val)]) == string(val) {
					return j
				}
			}
		}
	}
	return -1
}

func TestImportNameAndRemove(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "my model.gguf")
	b, err := os.ReadFile(shared.Path(t, "models", "stories260K.gguf"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(src, b, 0o644))
	s := &Store{Dir: filepath.Join(dir, "store")}
	_, err = s.Import(src)
	require.ErrorContains(t, err, "not a valid model name")

	ok := filepath.Join(dir, "tiny-story.v1.gguf")
	require.NoError(t, os.WriteFile(ok, b, 0o644))
	name, err := s.Import(ok)
	require.NoError(t, err)
	require.Equal(t, "tiny-story.v1", name)
	require.NoError(t, os.WriteFile(s.partialPath(name), []byte("x"), 0o644))
	require.NoError(t, s.recordHash(name, Recorded{SHA256: sha(b)}))

	require.NoError(t, s.Remove(name))
	_, err = s.Path(name)
	require.ErrorIs(t, err, ErrNotFound)
	require.NoFileExists(t, s.partialPath(name))
	_, rec := s.RecordedHash(name)
	require.True(t, rec, "removing a model keeps its recorded hash")
	require.NoError(t, s.Forget(name))
	_, rec = s.RecordedHash(name)
	require.False(t, rec)
	require.Error(t, s.Forget("../x"))
	require.ErrorIs(t, s.Remove(name), ErrNotFound)
	for _, bad := range []string{"../x", "/etc/passwd", ".hidden", "a/b", "", "x..y"} {
		require.Error(t, s.Remove(bad), bad)
	}
}
