package audio

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/mewkiz/flac"
	"github.com/mewkiz/flac/frame"
	"github.com/mewkiz/flac/meta"
	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/shared"
)

// flacBlock is one frame to encode: its channels' samples, and whether it
// is stored verbatim (else the encoder picks a predictor).
type flacBlock struct {
	ch       [][]int32
	verbatim bool
}

// encodeFLAC writes a FLAC file of the blocks with mewkiz/flac's encoder.
func encodeFLAC(t *testing.T, path string, rate uint32, bps uint8, blocks []flacBlock) {
	t.Helper()
	var buf bytes.Buffer
	nch := len(blocks[0].ch)
	info := &meta.StreamInfo{BlockSizeMin: 16, BlockSizeMax: 65535, SampleRate: rate, NChannels: uint8(nch), BitsPerSample: bps}
	enc, err := flac.NewEncoder(&buf, info)
	require.NoError(t, err)
	chans := map[int]frame.Channels{1: frame.ChannelsMono, 2: frame.ChannelsLR}[nch]
	for _, b := range blocks {
		enc.EnablePredictionAnalysis(!b.verbatim)
		fr := &frame.Frame{Header: frame.Header{HasFixedBlockSize: false, BlockSize: uint16(len(b.ch[0])),
			SampleRate: rate, Channels: chans, BitsPerSample: bps}}
		for _, s := range b.ch {
			fr.Subframes = append(fr.Subframes, &frame.Subframe{SubHeader: frame.SubHeader{Pred: frame.PredVerbatim}, Samples: s, NSamples: len(s)})
		}
		require.NoError(t, enc.WriteFrame(fr))
	}
	require.NoError(t, enc.Close())
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
}

// decodeAllFLAC decodes path with the given workers (1: the serial
// decode) and batch segment, and returns every sample and the error that
// ended the stream (io.EOF at a clean end).
func decodeAllFLAC(t *testing.T, path string, workers, segment int) ([]float32, error) {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	s, err := newFLAC(f)
	require.NoError(t, err)
	defer s.Close()
	s.par = newFLACFrames(f, workers, s.ch, s.scale)
	if workers > 1 {
		require.NotNil(t, s.par, "the parallel decoder must be chosen")
		s.par.segment = segment
	}
	var out []float32
	p := make([]float32, 3000)
	for {
		n, err := guarded{s}.Read(p)
		out = append(out, p[:n*s.ch]...)
		if err != nil {
			return out, err
		}
	}
}

// TestFLACParallelMatchesSerial: the parallel decode gives the serial
// decode's samples bit for bit and ends with its error, on real speech and
// noise, mono 16-bit and stereo 24-bit, uneven block sizes, files cut
// mid-frame, with a corrupt byte or trailing garbage, and a verbatim frame
// whose samples spell a valid frame (a false start a worker decodes).
func TestFLACParallelMatchesSerial(t *testing.T) {
	speech, err := Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(37, 25))
	dir := t.TempDir()

	var mono []flacBlock
	for i, at := 0, 0; at < len(speech); i++ {
		n := min(len(speech)-at, []int{4096, 1152, 577, 4608, 16}[i%5])
		s := make([]int32, n)
		for j := range s {
			s[j] = int32(speech[at+j] * 32767)
		}
		mono = append(mono, flacBlock{ch: [][]int32{s}, verbatim: i%7 == 3})
		at += n
	}
	// A verbatim frame that holds a whole small frame: 16-bit verbatim
	// samples are byte-aligned, so its bytes appear as they are.
	var small bytes.Buffer
	{
		p := filepath.Join(dir, "small.flac")
		encodeFLAC(t, p, 16000, 16, []flacBlock{{ch: [][]int32{make([]int32, 64)}}})
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		f, err := os.Open(p)
		require.NoError(t, err)
		start, ok := flacDataStart(f, int64(len(b)))
		f.Close()
		require.True(t, ok)
		small.Write(b[start:])
	}
	emb := small.Bytes()
	if len(emb)%2 == 1 {
		emb = append(emb, 0)
	}
	host := make([]int32, 2000)
	for j := range host {
		host[j] = int32(rng.IntN(65536) - 32768)
	}
	for j := 0; j < len(emb)/2; j++ {
		host[700+j] = int32(int16(uint16(emb[2*j])<<8 | uint16(emb[2*j+1])))
	}
	withFalse := append(append(append([]flacBlock{}, mono[:9]...), flacBlock{ch: [][]int32{host}, verbatim: true}), mono[9:]...)

	var stereo []flacBlock
	for i := range 40 {
		n := []int{4096, 333, 2049}[i%3]
		l, r := make([]int32, n), make([]int32, n)
		for j := range n {
			l[j] = int32(rng.IntN(1<<24) - 1<<23)
			r[j] = l[j]/2 + int32(rng.IntN(1<<12))
		}
		stereo = append(stereo, flacBlock{ch: [][]int32{l, r}, verbatim: i%4 == 0})
	}

	files := map[string][]byte{}
	for name, c := range map[string]struct {
		bps    uint8
		blocks []flacBlock
	}{"mono16": {16, mono}, "false-start": {16, withFalse}, "stereo24": {24, stereo}} {
		p := filepath.Join(dir, name+".flac")
		encodeFLAC(t, p, 16000, c.bps, c.blocks)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		files[name] = b
	}
	whole := files["mono16"]
	files["cut"] = whole[:len(whole)*2/3]
	bad := bytes.Clone(whole)
	bad[len(bad)/2] ^= 0x5A
	files["corrupt"] = bad
	files["trailing"] = append(bytes.Clone(whole), []byte("TAGgarbage after the last frame")...)
	files["trailing-sync"] = append(bytes.Clone(whole), 0xFF, 0xF8, 0x00)

	// The false frame is there: a worker whose segment starts before it
	// decodes it.
	{
		b := files["false-start"]
		i := bytes.Index(b, emb[:8])
		require.Positive(t, i)
		spans := scanFLACSegment(b, i-10, i+1)
		require.NotEmpty(t, spans)
		require.Equal(t, i, spans[0].from, "the embedded frame decodes where it lies")
	}

	for name, b := range files {
		p := filepath.Join(dir, "t-"+name+".flac")
		require.NoError(t, os.WriteFile(p, b, 0o644))
		want, wantErr := decodeAllFLAC(t, p, 1, 0)
		require.NotEmpty(t, want, name)
		for _, workers := range []int{2, 3, 5, 16} {
			for _, seg := range []int{1 << 10, 7001, flacSegment, flacSegmentFor(16)} {
				t.Run(fmt.Sprintf("%s/w%d/seg%d", name, workers, seg), func(t *testing.T) {
					got, gotErr := decodeAllFLAC(t, p, workers, seg)
					require.Equal(t, len(want), len(got))
					require.Equal(t, want, got)
					require.Equal(t, fmt.Sprint(wantErr), fmt.Sprint(gotErr))
				})
			}
		}
		if name == "mono16" || name == "stereo24" || name == "false-start" {
			require.ErrorIs(t, wantErr, io.EOF, name)
		} else {
			require.NotErrorIs(t, wantErr, io.EOF, name)
		}
	}
}

// TestFLACParallelFallsBack: one worker, or a file with an ID3v2 tag
// before "fLaC", keeps the serial decode.
func TestFLACParallelFallsBack(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a.flac")
	encodeFLAC(t, p, 16000, 16, []flacBlock{{ch: [][]int32{make([]int32, 100)}}})
	f, err := os.Open(p)
	require.NoError(t, err)
	defer f.Close()
	require.Nil(t, newFLACFrames(f, 1, 1, 1))
	require.NotNil(t, newFLACFrames(f, 2, 1, 1))
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	q := filepath.Join(dir, "id3.flac")
	require.NoError(t, os.WriteFile(q, append([]byte("ID3\x04\x00\x00\x00\x00\x00\x00"), b...), 0o644))
	g, err := os.Open(q)
	require.NoError(t, err)
	defer g.Close()
	require.Nil(t, newFLACFrames(g, 4, 1, 1))
}
