package usererr

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMessage(t *testing.T) {
	_, open := os.Open("nosuch.wav")
	_, stat := os.Stat("/nonexistent/m.bin")
	var n struct {
		AutoStopMs int `json:"autoStopMs"`
	}
	jsonErr := json.Unmarshal([]byte(`{"autoStopMs":"x"}`), &n)
	_, numErr := strconv.Atoi("abc")
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("nosuch.wav: %w", fmt.Errorf("audio: nosuch.wav: %w", open)), "nosuch.wav: no such file"},
		{stat, "/nonexistent/m.bin: no such file"},
		{fmt.Errorf("argument 1: %w", jsonErr), "argument 1: autoStopMs: want a number, not string"},
		{fmt.Errorf("--threads: %w", numErr), `--threads: "abc" is not a valid number`},
		{errors.New("json: cannot unmarshal number into Go value of type string"), "cannot unmarshal number"},
		{errors.New("whisper: the file ends early"), "the file ends early"},
		{errors.New("an audio file of type mp3 is fine"), "an audio file of type mp3 is fine"},
		{errors.New("jfk: bad header"), "jfk: bad header"},
	} {
		require.Equal(t, c.want, Message(c.err, Options{}), "%v", c.err)
	}
	require.Equal(t, "", Message(nil, Options{}))

	// The app's folders: no absolute path of them is shown.
	data := filepath.Join(t.TempDir(), "hark")
	_, err := os.Open(filepath.Join(data, "recordings", "5.wav"))
	got := Message(fmt.Errorf("history: %w", err), Options{Folders: []Folder{{Path: data, Name: "the data folder"}}})
	require.Equal(t, "history: recordings/5.wav: no such file", got)
	got = Message(fmt.Errorf("cannot write %s", data), Options{Folders: []Folder{{Path: data, Name: "the data folder"}}})
	require.Equal(t, "cannot write the data folder", got)
}
