package platform

// TextField edits the focused text field in place (macOS: Accessibility),
// for "type now, perfect later": a better transcript replaces the one
// inserted, but only while the field still ends with it.
type TextField interface {
	// ReplaceEnd replaces the end of the focused text field's value with
	// better when that value ends with old, and reports whether it did.
	// A field whose end is not old (the user typed on, or the focus moved)
	// is left alone: false, nil.
	ReplaceEnd(old, better string) (bool, error)
}
