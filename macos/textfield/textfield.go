// Package textfield reads and edits the focused text field through the
// Accessibility API (AXUIElement, via purego), so that a better transcript
// can replace the one just inserted, and finds its text cursor, which the
// recording overlay can show below (caret_darwin.go). It needs the
// Accessibility permission that pasting already asks for. The range arithmetic is platform
// independent (this file); textfield_darwin.go does the AX calls.
package textfield

import (
	"strings"
	"unicode/utf16"
)

// suffixRange is where old sits at the end of value, in UTF-16 code units
// (what AXSelectedTextRange counts): ok is false when value does not end
// with old, or old is empty.
func suffixRange(value, old string) (loc, length int, ok bool) {
	if old == "" || !strings.HasSuffix(value, old) {
		return 0, 0, false
	}
	n := len(utf16.Encode([]rune(old)))
	return len(utf16.Encode([]rune(value))) - n, n, true
}
