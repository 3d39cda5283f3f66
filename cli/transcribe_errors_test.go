package cli

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// runCLI runs hark with args and returns stdout, stderr and the exit code.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

// silentWAV writes a 16 kHz mono s16 WAV of n zero samples.
func silentWAV(t *testing.T, path string, n int) {
	var b bytes.Buffer
	b.WriteString("RIFF")
	binary.Write(&b, binary.LittleEndian, uint32(36+2*n))
	b.WriteString("WAVEfmt ")
	for _, v := range []any{uint32(16), uint16(1), uint16(1), uint32(16000), uint32(32000), uint16(2), uint16(16)} {
		binary.Write(&b, binary.LittleEndian, v)
	}
	b.WriteString("data")
	binary.Write(&b, binary.LittleEndian, uint32(2*n))
	b.Write(make([]byte, 2*n))
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// Bad inputs get a one-line error naming the file and a non-zero exit,
// while the other files of the same run are still transcribed.
func TestTranscribeBadFilesDoNotStopTheRun(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.wav")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	junk := filepath.Join(dir, "junk.wav")
	require.NoError(t, os.WriteFile(junk, []byte("this is not audio at all, not even close"), 0o644))
	quiet := filepath.Join(dir, "quiet.wav")
	silentWAV(t, quiet, 32000)
	missing := filepath.Join(dir, "missing.wav")
	jfk := shared.Path(t, "audio", "jfk.wav")
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")

	out, errs, code := runCLI(t, "transcribe", "--model", model, "--beam", "1", empty, junk, jfk, quiet, missing)
	require.Equal(t, 1, code)
	require.Contains(t, out, "==> "+jfk+" <==\nAnd so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.\n")
	for _, bad := range []string{empty, junk, quiet, missing} {
		require.Contains(t, errs, "hark: "+bad+": ", "stderr names %s", bad)
		require.NotContains(t, out, "==> "+bad+" <==\n"+"And", "no transcript for %s", bad)
	}
	require.Contains(t, errs, "silent")
	for _, line := range strings.Split(strings.TrimSpace(errs), "\n") {
		require.True(t, strings.HasPrefix(line, "hark: "), "one-line errors: %q", line)
	}
}

func TestTranscribeBadModels(t *testing.T) {
	jfk := shared.Path(t, "audio", "jfk.wav")
	dir := t.TempDir()
	corrupt := filepath.Join(dir, "corrupt.bin")
	b, err := os.ReadFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(corrupt, b[:len(b)/2], 0o644))
	for _, c := range []struct{ model, want string }{
		{filepath.Join(dir, "nope.bin"), "nope.bin: no such model file"},
		{corrupt, corrupt},
		{shared.Path(t, "models", "stories260K.gguf"), "stories260K.gguf"},
		{"", "no model"},
	} {
		args := []string{"transcribe", jfk}
		if c.model != "" {
			args = append(args, "--model", c.model)
		}
		out, errs, code := runCLI(t, args...)
		require.Equal(t, 1, code, c.model)
		require.Empty(t, out, c.model)
		require.Contains(t, errs, c.want, c.model)
		require.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
	}
}

func TestTranscribeFormatsAndOutputDir(t *testing.T) {
	jfk := shared.Path(t, "audio", "jfk.wav")
	model := shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin")
	dir := t.TempDir()
	// The segment ends at the model's closing timestamp (<|11.00|>); word
	// timestamps move it to the end of the last word, as the reference does.
	for _, c := range []struct {
		words bool
		end   string
	}{{false, "00:00:11,000"}, {true, "00:00:10,680"}} {
		args := []string{"transcribe", "--model", model, "--beam", "1", "--format", "srt", "--output-dir", dir, jfk}
		if c.words {
			args = append(args, "--word-timestamps")
		}
		_, errs, code := runCLI(t, args...)
		require.Zero(t, code, errs)
		srt, err := os.ReadFile(filepath.Join(dir, "jfk.srt"))
		require.NoError(t, err)
		require.Equal(t, "1\n00:00:00,000 --> "+c.end+"\nAnd so my fellow Americans, ask not what your country can do for you, ask what you can do for your country.\n\n", string(srt))
	}
	out, errs, code := runCLI(t, "transcribe", "--model", model, "--beam", "1", "--format", "json", "--word-timestamps", jfk)
	require.Zero(t, code, errs)
	require.True(t, strings.HasPrefix(out, `{"text":" And so my fellow Americans,`), out[:min(80, len(out))])
	require.Contains(t, out, `"segments":[{"id":0,"seek":0,"start":0,"end":10.68,`)
	require.Contains(t, out, `"words":[{"word":" And","start":0,"end":0.68,`)
	_, errs, code = runCLI(t, "transcribe", "--model", model, "--format", "doc", jfk)
	require.Equal(t, 1, code)
	require.Contains(t, errs, "unknown --format")
}
