package audio

import "fmt"

// safely runs a third-party decoder call. Those decoders can panic on
// crafted input (a fuzzed Ogg page made jfreymuth/oggvorbis index out of
// range), and a file is hostile input: the panic becomes the corrupt-stream
// error every caller already handles.
func safely[T any](codec string, f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			var zero T
			v, err = zero, fmt.Errorf("corrupt %s stream (the decoder failed: %v)", codec, r)
		}
	}()
	return f()
}

// guarded is a third-party decoder's stream with its Read run safely.
type guarded struct{ Stream }

func (g guarded) Read(p []float32) (int, error) {
	return safely(g.Format(), func() (int, error) { return g.Stream.Read(p) })
}
