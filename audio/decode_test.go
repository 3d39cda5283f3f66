package audio

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

// jfkInt16 reads jfk.wav's samples straight from its data chunk, independent
// of the decoder under test.
func jfkInt16(t *testing.T) []int16 {
	t.Helper()
	b, err := os.ReadFile(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	i := bytes.Index(b, []byte("data"))
	require.Positive(t, i)
	n := int(binary.LittleEndian.Uint32(b[i+4:]))
	raw := b[i+8 : i+8+n]
	out := make([]int16, n/2)
	for k := range out {
		out[k] = int16(binary.LittleEndian.Uint16(raw[2*k:]))
	}
	return out
}

func TestLoad16kExactForS16Mono(t *testing.T) {
	want := jfkInt16(t)
	got, err := Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	require.Len(t, got, len(want))
	for i, v := range want {
		if got[i] != float32(v)/32768 {
			t.Fatalf("sample %d: got %v, want %v", i, got[i], float32(v)/32768)
		}
	}
}

// wavSpec describes a hand-written WAV for the variants tools rarely emit.
type wavSpec struct {
	tag        uint16 // 1 PCM, 3 float
	extensible bool
	rf64       bool
	channels   int
	rate       int
	bits       int
	extraChunk bool // a LIST chunk (odd size) before fmt
	dataSize   uint32
	noDataSize bool // streaming writer: size 0xffffffff
}

func writeWAV(t *testing.T, path string, sp wavSpec, data []byte) {
	t.Helper()
	var b bytes.Buffer
	le := func(v any) { require.NoError(t, binary.Write(&b, binary.LittleEndian, v)) }
	if sp.rf64 {
		b.WriteString("RF64")
		le(uint32(0xffffffff))
		b.WriteString("WAVE")
		b.WriteString("ds64")
		le(uint32(28))
		le(uint64(0))
		le(uint64(len(data)))
		le(uint64(0))
		le(uint32(0))
	} else {
		b.WriteString("RIFF")
		le(uint32(0))
		b.WriteString("WAVE")
	}
	if sp.extraChunk {
		b.WriteString("LIST")
		le(uint32(5))
		b.WriteString("INFOx\x00") // 5 bytes + pad
	}
	bps := sp.bits / 8
	b.WriteString("fmt ")
	if sp.extensible {
		le(uint32(40))
		le(uint16(0xfffe))
	} else {
		le(uint32(16))
		le(sp.tag)
	}
	le(uint16(sp.channels))
	le(uint32(sp.rate))
	le(uint32(sp.rate * sp.channels * bps))
	le(uint16(sp.channels * bps))
	le(uint16(sp.bits))
	if sp.extensible {
		le(uint16(22))
		le(uint16(sp.bits))
		le(uint32(0))
		le(sp.tag)
		b.Write(extensibleGUIDTail)
	}
	b.WriteString("data")
	switch {
	case sp.rf64, sp.noDataSize:
		le(uint32(0xffffffff))
	case sp.dataSize != 0:
		le(sp.dataSize)
	default:
		le(uint32(len(data)))
	}
	b.Write(data)
	if !sp.rf64 && !sp.noDataSize {
		binary.LittleEndian.PutUint32(b.Bytes()[4:], uint32(b.Len()-8))
	}
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

// TestWAVVariants decodes every PCM/float layout from jfk's samples; each is
// an exact (or, for 8-bit, quantisation-bounded) copy of the original.
func TestWAVVariants(t *testing.T) {
	src := jfkInt16(t)
	dir := t.TempDir()
	enc := func(bits int, float bool, ch int) []byte {
		var b bytes.Buffer
		for _, v := range src {
			for c := range ch {
				x := int32(v)
				if c == 1 {
					x = -x // second channel inverted... and the mix checked below
				}
				switch {
				case float && bits == 32:
					binary.Write(&b, binary.LittleEndian, float32(x)/32768)
				case float:
					binary.Write(&b, binary.LittleEndian, float64(x)/32768)
				case bits == 8:
					b.WriteByte(byte(x>>8 + 128))
				case bits == 16:
					binary.Write(&b, binary.LittleEndian, int16(x))
				case bits == 24:
					y := x << 8
					b.Write([]byte{byte(y), byte(y >> 8), byte(y >> 16)})
				case bits == 32:
					binary.Write(&b, binary.LittleEndian, x<<16)
				}
			}
		}
		return b.Bytes()
	}
	cases := []struct {
		name  string
		sp    wavSpec
		float bool
		tol   float64
	}{
		{"u8", wavSpec{tag: 1, bits: 8}, false, 1.0 / 128},
		{"s16-list-chunk", wavSpec{tag: 1, bits: 16, extraChunk: true}, false, 0},
		{"s24", wavSpec{tag: 1, bits: 24}, false, 0},
		{"s32", wavSpec{tag: 1, bits: 32}, false, 0},
		{"f32", wavSpec{tag: 3, bits: 32}, true, 0},
		{"f64", wavSpec{tag: 3, bits: 64}, true, 0},
		{"s24-extensible", wavSpec{tag: 1, bits: 24, extensible: true}, false, 0},
		{"f32-extensible", wavSpec{tag: 3, bits: 32, extensible: true}, true, 0},
		{"s16-rf64", wavSpec{tag: 1, bits: 16, rf64: true}, false, 0},
		{"s16-streamed", wavSpec{tag: 1, bits: 16, noDataSize: true}, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sp := tc.sp
			sp.channels, sp.rate = 1, 16000
			p := filepath.Join(dir, tc.name+".wav")
			writeWAV(t, p, sp, enc(sp.bits, tc.float, 1))
			got, err := Load16k(p)
			require.NoError(t, err)
			require.Len(t, got, len(src))
			var worst float64
			for i, v := range src {
				worst = math.Max(worst, math.Abs(float64(got[i])-float64(v)/32768))
			}
			require.LessOrEqual(t, worst, tc.tol)
		})
	}

	t.Run("stereo-s24-extensible-channels", func(t *testing.T) {
		p := filepath.Join(dir, "st.wav")
		writeWAV(t, p, wavSpec{tag: 1, bits: 24, extensible: true, channels: 2, rate: 16000}, enc(24, false, 2))
		s, err := Open(p)
		require.NoError(t, err)
		defer s.Close()
		require.Equal(t, 2, s.Channels())
		x, err := ReadAll(s)
		require.NoError(t, err)
		require.Len(t, x, 2*len(src))
		for i, v := range src {
			require.Equal(t, float32(v)/32768, x[2*i])
			require.Equal(t, -float32(v)/32768, x[2*i+1])
		}
	})

	t.Run("truncated-data-keeps-whole-frames", func(t *testing.T) {
		p := filepath.Join(dir, "trunc.wav")
		data := enc(16, false, 1)
		writeWAV(t, p, wavSpec{tag: 1, bits: 16, channels: 1, rate: 16000, dataSize: uint32(len(data) + 1000)}, data[:len(data)-1])
		got, err := Load16k(p)
		require.NoError(t, err)
		require.Len(t, got, len(src)-1)
	})
}

func TestWAVErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, b, 0o644))
		return p
	}
	hdr := func(extra string) []byte { return []byte("RIFF\x00\x00\x00\x00WAVE" + extra) }
	fmt16 := "fmt \x10\x00\x00\x00\x01\x00\x01\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00"
	for _, tc := range []struct {
		name, data, want string
	}{
		{"shortfmt.wav", string(hdr("fmt \x10\x00\x00\x00\x01\x00")), "truncated fmt chunk"},
		{"nofmt.wav", string(hdr("")), "no fmt chunk"},
		{"datafirst.wav", string(hdr("data\x02\x00\x00\x00\x00\x00")), "data chunk before fmt"},
		{"badrate.wav", string(hdr("fmt \x10\x00\x00\x00\x01\x00\x01\x00\x05\x00\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")), "sample rate"},
		{"zerochan.wav", string(hdr("fmt \x10\x00\x00\x00\x01\x00\x00\x00\x80\x3e\x00\x00\x00\x7d\x00\x00\x02\x00\x10\x00data\x00\x00\x00\x00")), "0 channels"},
		{"hugechunk.wav", string(hdr("JUNK\xff\xff\xff\x7f")), "truncated \"JUNK\" chunk"},
		{"empty-data.wav", string(hdr(fmt16 + "data\x00\x00\x00\x00")), "no audio samples"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load16k(write(tc.name, []byte(tc.data)))
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Contains(t, err.Error(), tc.name, "error names the file")
		})
	}
	t.Run("alaw-without-ffmpeg", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		p := write("alaw.wav", hdr("fmt \x10\x00\x00\x00\x06\x00\x01\x00\x40\x1f\x00\x00\x40\x1f\x00\x00\x01\x00\x08\x00data\x02\x00\x00\x00\xd5\xd5"))
		_, err := Load16k(p)
		require.ErrorContains(t, err, "A-law")
	})
}

func TestOpenErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := Open(filepath.Join(dir, "missing.wav"))
	require.ErrorContains(t, err, "missing.wav")
	_, err = Open(dir)
	require.ErrorContains(t, err, "directory")
	empty := filepath.Join(dir, "empty.mp3")
	require.NoError(t, os.WriteFile(empty, nil, 0o644))
	_, err = Open(empty)
	require.ErrorContains(t, err, "empty file")

	// Not audio at all, with no ffmpeg to ask: the error says what is needed.
	junk := filepath.Join(dir, "notes.wav")
	require.NoError(t, os.WriteFile(junk, []byte("just some text, not a recording\n"), 0o644))
	// Not audio at all: refused before ffmpeg is asked, with or without it.
	t.Run("no-ffmpeg", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		_, err := Open(junk)
		require.ErrorContains(t, err, "unrecognised format")
		require.ErrorContains(t, err, "not a supported audio or video file")
	})
	t.Run("with-ffmpeg", func(t *testing.T) {
		needFFmpeg(t)
		_, err := Load16k(junk)
		require.ErrorContains(t, err, "unrecognised format")
	})
	// A recognised container that is broken: ffmpeg's own error comes back.
	t.Run("ffmpeg-rejects", func(t *testing.T) {
		needFFmpeg(t)
		p := filepath.Join(dir, "broken.m4a")
		require.NoError(t, os.WriteFile(p, []byte("\x00\x00\x00\x18ftypM4A \x00\x00\x00\x00garbage-garbage"), 0o644))
		_, err := Load16k(p)
		require.ErrorContains(t, err, "ffmpeg failed")
	})

	// A FLAC signature followed by garbage.
	bad := filepath.Join(dir, "bad.flac")
	require.NoError(t, os.WriteFile(bad, append([]byte("fLaC\x00\x00\x00\x22"), bytes.Repeat([]byte{0xa5}, 300)...), 0o644))
	_, err = Load16k(bad)
	require.ErrorContains(t, err, "FLAC")
}

// needFFmpeg fails (never skips) when the encoder the container tests use is
// missing: CI installs it (apt-get install ffmpeg).
func needFFmpeg(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is not on PATH: these tests make MP3/Ogg/FLAC/M4A files with it; install it (apt-get install ffmpeg)")
	}
	return p
}

func ffmpegMake(t *testing.T, out string, args ...string) {
	t.Helper()
	shared.Encode(t, out, args...)
}

// align finds the lag (within ±maxLag) that best matches got to want and
// returns it with the SNR in dB at that lag over the overlap.
func align(want []float32, got []float32, maxLag int) (int, float64) {
	bestLag, best := 0, math.Inf(-1)
	for lag := -maxLag; lag <= maxLag; lag++ {
		var dot float64
		for i := 0; i < len(want); i += 4 {
			j := i + lag
			if j >= 0 && j < len(got) {
				dot += float64(want[i]) * float64(got[j])
			}
		}
		if dot > best {
			best, bestLag = dot, lag
		}
	}
	var sig, noise float64
	for i, w := range want {
		j := i + bestLag
		if j < 0 || j >= len(got) {
			continue
		}
		d := float64(got[j]) - float64(w)
		sig += float64(w) * float64(w)
		noise += d * d
	}
	return bestLag, 10 * math.Log10(sig/noise)
}

// TestContainers encodes jfk.wav with ffmpeg into every supported container
// and checks decode + downmix + resample against the original samples.
func TestContainers(t *testing.T) {
	needFFmpeg(t)
	want, err := Load16k(shared.Path(t, "audio", "jfk.wav"))
	require.NoError(t, err)
	dir := t.TempDir()
	for _, tc := range []struct {
		file   string
		args   []string
		format string  // Stream.Format() of the decoder used
		minSNR float64 // dB; +Inf = bit-exact
		maxLag int
	}{
		{"s24.wav", []string{"-c:a", "pcm_s24le"}, "wav", math.Inf(1), 0},
		{"f32.wav", []string{"-c:a", "pcm_f32le"}, "wav", math.Inf(1), 0},
		{"u8.wav", []string{"-c:a", "pcm_u8"}, "wav", 27, 0},
		{"stereo-44k.wav", []string{"-af", "pan=stereo|c0=c0|c1=c0", "-ar", "44100"}, "wav", 60, 0},
		{"stereo-48k-s32.wav", []string{"-af", "pan=stereo|c0=c0|c1=c0", "-ar", "48000", "-c:a", "pcm_s32le"}, "wav", 60, 0},
		{"six-ch-extensible.wav", []string{"-af", "pan=5.1|c0=c0|c1=c0|c2=c0|c3=c0|c4=c0|c5=c0", "-c:a", "pcm_s16le"}, "wav", math.Inf(1), 0},
		{"mono.flac", []string{"-c:a", "flac"}, "flac", math.Inf(1), 0},
		{"stereo-44k-s24.flac", []string{"-af", "pan=stereo|c0=c0|c1=c0", "-ar", "44100", "-c:a", "flac", "-sample_fmt", "s32"}, "flac", 60, 0},
		{"44k.mp3", []string{"-ar", "44100", "-c:a", "libmp3lame", "-b:a", "128k"}, "mp3", 20, 0},
		{"16k.mp3", []string{"-c:a", "libmp3lame", "-b:a", "64k"}, "mp3", 20, 0},
		{"48k-stereo.ogg", []string{"-af", "pan=stereo|c0=c0|c1=c0", "-ar", "48000", "-c:a", "libvorbis", "-q:a", "4"}, "vorbis", 18, 0},
		{"16k.ogg", []string{"-c:a", "libvorbis", "-q:a", "4"}, "vorbis", 18, 0},
		{"aac.m4a", []string{"-c:a", "aac", "-b:a", "96k"}, "ffmpeg", 35, 0},
		{"opus.webm", []string{"-c:a", "libopus", "-b:a", "48k"}, "ffmpeg", 24, 0},
		{"alac.mov", []string{"-c:a", "alac"}, "ffmpeg", math.Inf(1), 0},
		{"opus.mkv", []string{"-c:a", "libopus", "-b:a", "48k"}, "ffmpeg", 24, 0},
		{"opus.ogg", []string{"-c:a", "libopus", "-b:a", "48k"}, "ffmpeg", 24, 0},
		{"pcm.aiff", []string{"-c:a", "pcm_s16be"}, "ffmpeg", math.Inf(1), 0},
		{"alaw.wav", []string{"-c:a", "pcm_alaw"}, "ffmpeg", 30, 0},
		// A video with its index (moov) last, as ffmpeg writes it by
		// default: ffmpeg must be able to seek the file.
		{"video.mp4", []string{"-f", "lavfi", "-i", "color=c=black:s=64x48:r=5", "-shortest", "-map", "1:v", "-map", "0:a", "-c:v", "mpeg4", "-c:a", "aac", "-b:a", "96k"}, "ffmpeg", 35, 0},
		{"flac-named.mp3", []string{"-c:a", "flac", "-f", "flac"}, "flac", math.Inf(1), 0}, // sniffed, not by extension
	} {
		t.Run(tc.file, func(t *testing.T) {
			p := filepath.Join(dir, tc.file)
			ffmpegMake(t, p, tc.args...)
			if ext := filepath.Ext(p); tc.file != "flac-named.mp3" {
				// The file pickers offer it, and the table sniff picked
				// the format from says it goes by that name.
				require.Contains(t, Extensions(), ext)
				b, err := os.ReadFile(p)
				require.NoError(t, err)
				n := id3v2Size(b)
				require.Contains(t, sniff(b[n:n+min(int64(len(b))-n, sniffLen)], n).exts, ext)
			}
			s, err := Open16k(p)
			require.NoError(t, err)
			require.Equal(t, tc.format, s.Format())
			got, err := ReadAll(s)
			require.NoError(t, s.Close())
			require.NoError(t, err)
			if math.IsInf(tc.minSNR, 1) {
				require.Equal(t, want, got)
				return
			}
			// Every decoder here trims encoder delay and padding (MP3's
			// LAME tag included): same length, no lag (maxLag 0 checks it).
			require.InDelta(t, len(want), len(got), 200, "length")
			lag, snr := align(want, got, tc.maxLag)
			t.Logf("%s: %d samples (want %d), lag %d, SNR %.1f dB", tc.file, len(got), len(want), lag, snr)
			require.GreaterOrEqual(t, snr, tc.minSNR)
		})
	}
}

// TestNeedsFFmpegNamesFormat: without ffmpeg, a format only it decodes gets
// an error naming the format.
func TestNeedsFFmpegNamesFormat(t *testing.T) {
	dir := t.TempDir()
	m4a := filepath.Join(dir, "clip.m4a")
	ffmpegMake(t, m4a, "-c:a", "aac", "-b:a", "64k")
	webm := filepath.Join(dir, "clip.webm")
	ffmpegMake(t, webm, "-c:a", "libopus")
	t.Setenv("PATH", t.TempDir())
	for p, name := range map[string]string{m4a: "M4A", webm: "WebM"} {
		_, err := Open(p)
		require.Error(t, err)
		msg := err.Error()
		require.True(t, strings.Contains(msg, name) && strings.Contains(msg, "needs ffmpeg"), msg)
	}
}

// TestFFmpegCloseEarly: closing an ffmpeg stream mid-file ends the process
// without waiting for it to finish decoding.
func TestFFmpegCloseEarly(t *testing.T) {
	p := filepath.Join(t.TempDir(), "clip.m4a")
	ffmpegMake(t, p, "-c:a", "aac")
	s, err := Open(p)
	require.NoError(t, err)
	require.Equal(t, 16000, s.SampleRate())
	buf := make([]float32, 100)
	n, err := s.Read(buf)
	require.NoError(t, err)
	require.Positive(t, n)
	require.NoError(t, s.Close())
	_, err = s.Read(buf)
	require.Error(t, err)
}

// TestPlaylistsRefused: playlists and concat lists name other files; ffmpeg
// must never be handed one, whatever the upload is called, and the error says
// why. Real containers keep working (TestContainers).
func TestPlaylistsRefused(t *testing.T) {
	needFFmpeg(t)
	dir := t.TempDir()
	for _, pl := range shared.Playlists(t, dir) {
		for _, name := range []string{pl.Name, pl.Name + ".m4a", pl.Name + ".m3u8"} {
			p := filepath.Join(dir, name)
			require.NoError(t, os.WriteFile(p, pl.Data, 0o600))
			s, err := Open(p)
			if err == nil {
				s.Close()
			}
			require.ErrorContains(t, err, "playlist", name)
			require.ErrorContains(t, err, "refused", name)
		}
	}
}
