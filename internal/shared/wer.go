package shared

import "strings"

// WER is the word error rate of got against the reference want: the word
// edit distance over the reference's length, ignoring case and punctuation
// (apostrophes kept).
func WER(want, got string) float64 {
	norm := func(s string) []string {
		return strings.Fields(strings.Map(func(r rune) rune {
			switch {
			case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '\'':
				return r
			case r >= 'A' && r <= 'Z':
				return r + 'a' - 'A'
			}
			return ' '
		}, s))
	}
	a, b := norm(want), norm(got)
	d := make([]int, len(b)+1)
	for j := range d {
		d[j] = j
	}
	for i := 1; i <= len(a); i++ {
		prev := d[0]
		d[0] = i
		for j := 1; j <= len(b); j++ {
			cur := d[j]
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[j] = min(d[j]+1, d[j-1]+1, prev+cost)
			prev = cur
		}
	}
	return float64(d[len(b)]) / float64(max(1, len(a)))
}
