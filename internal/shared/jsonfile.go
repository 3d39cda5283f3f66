package shared

import (
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"
)

// ReadJSON decodes the JSON file at path into v, gunzipping it when the name
// ends in ".gz" (large reference files are committed compressed to keep the
// tracked tree small).
func ReadJSON(t testing.TB, path string, v any) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reference file: %v", err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		z, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		defer z.Close()
		r = z
	}
	if err := json.NewDecoder(r).Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
