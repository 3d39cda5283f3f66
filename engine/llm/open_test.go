package llm

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/engine/cpu"
	"github.com/harkapp/hark/internal/shared"
)

func TestOpenFile(t *testing.T) {
	be := cpu.New(cpu.Options{})
	defer be.Close()
	o, err := OpenFile(shared.Path(t, "models", "stories260K.gguf"), be, Options{Context: 64})
	require.NoError(t, err)
	require.Equal(t, "llama", o.Arch.Name)
	require.True(t, o.AddBOS())
	require.Equal(t, 512, o.Tk.VocabSize())
	logits, err := o.M.Prefill([]int32{1})
	require.NoError(t, err)
	require.Len(t, logits, 512)
	require.NoError(t, o.Close())

	vocabOnly := shared.Path(t, "llm-kit", "gguf-vocab", "ggml-vocab-llama-spm.gguf")
	_, err = OpenFile(vocabOnly, be, Options{})
	require.ErrorContains(t, err, vocabOnly)
	_, err = OpenFile(shared.Path(t, "whisper-kit", "models", "ggml-kit-tiny.en-q8_0.bin"), be, Options{})
	require.Error(t, err)
}
