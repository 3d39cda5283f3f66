package app

import "errors"

// PasteLast inserts the last dictation's text again, the way the settings
// insert dictated text (the "paste the last transcript again" hotkey and
// `hark dictate paste-last`).
func (d *Dictation) PasteLast() error {
	d.mu.Lock()
	text, out := d.st.LastText, d.out
	d.mu.Unlock()
	if text == "" {
		return errors.New("nothing has been dictated since Hark started")
	}
	if out == nil {
		return errors.New("no text output in this build")
	}
	set, err := d.deps.settings.Get()
	if err != nil {
		return err
	}
	return out.Insert(text, set.OutputMode, set.RestoreClipboard)
}
