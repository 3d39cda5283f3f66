package shared

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// JFKText is the transcript of audio/jfk.wav.
const JFKText = "And so my fellow Americans, ask not what your country can do for you, ask what you can do for your country."

// Encode writes audio/jfk.wav to out through ffmpeg with args (codec,
// container, extra inputs...). It fails, never skips, without ffmpeg.
func Encode(t testing.TB, out string, args ...string) {
	t.Helper()
	bin, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Fatal("ffmpeg is not on PATH: the test makes media files with it; install it (apt-get install ffmpeg)")
	}
	in := Path(t, "audio", "jfk.wav")
	cmd := exec.Command(bin, append(append([]string{"-nostdin", "-v", "error", "-y", "-i", in}, args...), out)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ffmpeg: %v: %s", err, b)
	}
}

// Playlist is an upload that names other files for ffmpeg to read.
type Playlist struct {
	Name string
	Data []byte
}

// Playlists writes two secrets into dir (jfk.wav as secret.mp3 and
// secret.wav, readable by the test's user) and returns the uploads that
// would make an unguarded `ffmpeg -i UPLOAD` read them: an HLS playlist
// naming the MP3 by absolute path, and an ffconcat list naming the WAV by a
// path relative to the upload (so the upload must be saved in dir). A
// transcript containing JFKText means a secret was read.
func Playlists(t testing.TB, dir string) []Playlist {
	t.Helper()
	Encode(t, filepath.Join(dir, "secret.mp3"), "-c:a", "libmp3lame")
	wav, err := os.ReadFile(Path(t, "audio", "jfk.wav"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret.wav"), wav, 0o600); err != nil {
		t.Fatal(err)
	}
	hls := "#EXTM3U\n#EXT-X-TARGETDURATION:20\n#EXTINF:11.0,\n" + filepath.Join(dir, "secret.mp3") + "\n#EXT-X-ENDLIST\n"
	return []Playlist{
		{"hls", []byte(hls)},
		{"ffconcat", []byte("ffconcat version 1.0\nfile secret.wav\n")},
	}
}
