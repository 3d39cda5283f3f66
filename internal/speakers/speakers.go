// Package speakers names the two sides of a meeting recording, one a
// channel: "You" (the microphone) and "Others" (the system audio). The
// capture (audio/meeting), the CLI's --channels and the API's channels
// field all take the names from here.
package speakers

import (
	"fmt"
	"strings"
)

// The speakers, which are also the channels of a meeting recording.
const (
	You    = 0 // the microphone
	Others = 1 // the system audio
	Count  = 2
)

// Names are the speakers' labels.
var Names = [Count]string{"You", "Others"}

// maxList bounds the list Parse reads (it comes from a command line or
// a form field).
const maxList = 64

// Parse reads a channel list such as "you,others" (case and spaces
// ignored): the speaker of each channel of a file, in order, each named
// once.
func Parse(list string) ([]int, error) {
	if len(list) > maxList {
		return nil, fmt.Errorf("the channel list is over %d characters", maxList)
	}
	names := strings.Split(strings.ToLower(list), ",")
	if len(names) != Count {
		return nil, fmt.Errorf("%q: name the %d channels, e.g. you,others", list, Count)
	}
	var seen [Count]bool
	out := make([]int, 0, Count)
	for _, n := range names {
		n = strings.TrimSpace(n)
		sp := -1
		for i, name := range Names {
			if n == strings.ToLower(name) {
				sp = i
			}
		}
		switch {
		case sp < 0:
			return nil, fmt.Errorf("%q: unknown speaker %q (want you or others)", list, n)
		case seen[sp]:
			return nil, fmt.Errorf("%q names %s twice", list, n)
		}
		seen[sp] = true
		out = append(out, sp)
	}
	return out, nil
}

// Cue is a transcript line said by name, as every output labels it:
// "Name: text", or in WebVTT a voice tag, "<v Name>text".
func Cue(name, text string, vtt bool) string {
	if vtt {
		return "<v " + name + ">" + text
	}
	return name + ": " + text
}
