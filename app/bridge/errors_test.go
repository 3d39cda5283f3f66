package bridge

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/internal/usererr"
)

// Files is a service whose errors carry a path in the data folder.
type Files struct{ dir string }

type Prefs struct {
	Level int `json:"level"`
}

func (f *Files) Read(name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(f.dir, "recordings", name))
	return string(b), err
}

func (f *Files) Set(p Prefs) error { return nil }

// An error answer names no Go type and no path of the app's folders: the
// method's file error reads relative to the data folder, a badly typed
// argument says what was wanted in plain words.
func TestErrorsNameNoGoTypeNorDataFolder(t *testing.T) {
	data := filepath.Join(t.TempDir(), "hark")
	b := New(Options{Folders: []usererr.Folder{{Path: data, Name: "the data folder"}}})
	require.NoError(t, b.Register(&Files{dir: data}))
	goType := regexp.MustCompile(`Go (value|struct)|bridge\.|Prefs|of type|\*fs\.|PathError`)

	code, r, _ := call(t, b, "Files.Read", `["5.wav"]`)
	require.Equal(t, 200, code)
	require.Equal(t, "recordings/5.wav: no such file", r.Error)
	require.NotContains(t, r.Error, data)

	code, r, _ = call(t, b, "Files.Set", `[{"level":"high"}]`)
	require.Equal(t, 400, code)
	require.Equal(t, "Files.Set: argument 1: level: want a number, not string", r.Error)
	require.NotRegexp(t, goType, r.Error)

	code, r, _ = call(t, b, "Files.Read", `[5]`)
	require.Equal(t, 400, code)
	require.Equal(t, "Files.Read: argument 1: want text, not number", r.Error)
	require.NotRegexp(t, goType, r.Error)
}
