package shared

import "strings"

// Words is s as WER compares it: lower case, punctuation but apostrophes
// dropped, split at spaces.
func Words(s string) []string {
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

// WER is the word error rate of got against the reference want: the word
// edit distance over the reference's length, ignoring case and punctuation
// (apostrophes kept).
func WER(want, got string) float64 {
	a, b := Words(want), Words(got)
	return float64(distance(a, b)) / float64(max(1, len(a)))
}

// distance is the word edit distance of hyp from ref, one rolling row of
// the table (passages of thousands of words stay O(n) in memory).
func distance(ref, hyp []string) int {
	prev, cur := make([]int, len(hyp)+1), make([]int, len(hyp)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ref); i++ {
		cur[0] = i
		for j := 1; j <= len(hyp); j++ {
			c := 1
			if ref[i-1] == hyp[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(hyp)]
}

// editDistance is the table of word edit distances between the prefixes
// of ref and hyp: d[i][j] for ref[:i] and hyp[:j]. Only the alignment needs
// the whole table; WER keeps one row (distance).
func editDistance(ref, hyp []string) [][]int {
	d := make([][]int, len(ref)+1)
	for i := range d {
		d[i] = make([]int, len(hyp)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ref); i++ {
		for j := 1; j <= len(hyp); j++ {
			c := 1
			if ref[i-1] == hyp[j-1] {
				c = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+c)
		}
	}
	return d
}

// AlignWords aligns hyp to ref by word edit distance (words compared as
// given: normalize them first): for each hyp word the index of the ref
// word it matches, or -1 (an insertion or a substitution).
func AlignWords(ref, hyp []string) []int {
	d := editDistance(ref, hyp)
	out := make([]int, len(hyp))
	for j := range out {
		out[j] = -1
	}
	for i, j := len(ref), len(hyp); i > 0 && j > 0; {
		switch {
		case d[i][j] == d[i-1][j-1] && ref[i-1] == hyp[j-1]:
			out[j-1] = i - 1
			i, j = i-1, j-1
		case d[i][j] == d[i-1][j-1]+1:
			i, j = i-1, j-1
		case d[i][j] == d[i-1][j]+1:
			i--
		default:
			j--
		}
	}
	return out
}
