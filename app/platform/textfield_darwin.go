package platform

import "github.com/harkapp/hark/macos/textfield"

// NewTextField edits the focused field through Accessibility.
func NewTextField() TextField { return darwinTextField{} }

type darwinTextField struct{}

func (darwinTextField) ReplaceEnd(old, better string) (bool, error) {
	return textfield.ReplaceEnd(old, better)
}
