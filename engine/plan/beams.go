package plan

import "math"

// The words of WhisperBeams' state header and its status values.
const (
	BeamsStatus   = iota // one of the Beams* statuses below
	BeamsCount           // tokens each beam holds
	BeamsFinished        // finished entries
	BeamsN               // the search's beams (nb)
	BeamsLimit           // the most tokens a beam takes (the search's steps)
	BeamsMaxCand         // finished sequences that end the search
	BeamsEndTs           // the end timestamp (0: none)
)

// WhisperBeams statuses: running, or why the search stopped.
const (
	BeamsRunning = iota
	BeamsEnough  // maxCand sequences finished
	BeamsEnded   // every candidate ended: no live beam
	BeamsLimitReached
)

// BeamsStateWords is the size of a WhisperBeams state of beams rows,
// fin finished entries of at most capTok tokens.
func BeamsStateWords(beams, fin, capTok int) int { return BeamsHeader + beams + fin*(capTok+2) }

// BeamsIO is one WhisperBeams step's data: top the candidates (rows of
// ldt words, ldt 0: one row for every beam), hist the beams' tokens (rows
// of capTok), st the state, src and next the step's outputs.
type BeamsIO struct {
	Top       []float32
	Ldt       int
	Hist      []int32
	CapTok    int
	St        []int32
	Src, Next []int32
	Fin       int
	EOT       int32
}

// BeamsStep is one step of WhisperBeams (see its contract), written once
// for the CPU backend's kernel and Whisper's host beam search, so that
// both rank bit for bit as the GPUs do: the same float32 sums, the same
// order (a candidate's rank counts the better ones; NaN ranks last), the
// same repeats. The reference's check that a finished sequence is new is
// kept only where it can fail (the live beams added at the stop): a
// sequence finishing now ends in EOT or an end token, and the older
// finished ones are shorter or end where no live beam does.
func BeamsStep(io *BeamsIO) {
	st := io.St
	if st[BeamsStatus] != BeamsRunning {
		return
	}
	rows, capTok := len(io.Src), io.CapTok
	nb, c := int(st[BeamsN]), int(st[BeamsCount])
	if nb < 1 || nb > rows || c >= capTok || c < 0 {
		st[BeamsStatus] = BeamsLimitReached // no room (the host checks first)
		return
	}
	k := nb + 1
	sums := st[BeamsHeader : BeamsHeader+rows]
	row := func(b int) []int32 { return io.Hist[b*capTok : b*capTok+c] }
	eq := func(a, b int) bool {
		ra, rb := row(a), row(b)
		for i := range ra {
			if ra[i] != rb[i] {
				return false
			}
		}
		return true
	}
	n := nb * k
	tok := make([]int32, n)
	score := make([]float32, n)
	for i := range n {
		b, j := i/k, i%k
		r := io.Top[b*io.Ldt:]
		tok[i] = int32(math.Float32bits(r[1+2*j]))
		score[i] = math.Float32frombits(uint32(sums[b])) + r[2+2*j]
	}
	// same key: the same beam tokens and new token
	same := func(x, y int) bool { return tok[x] == tok[y] && eq(x/k, y/k) }
	kept := make([]bool, n)
	ks, kb := make([]float32, n), make([]int, n) // the kept one's score and beam: its last repeat's
	for i := range n {
		kept[i] = true
		for x := range i {
			if same(x, i) {
				kept[i] = false
				break
			}
		}
		ks[i], kb[i] = score[i], i/k
		for x := i + 1; x < n; x++ {
			if same(x, i) {
				ks[i], kb[i] = score[x], x/k
			}
		}
	}
	order := make([]int, 0, n)
	order = order[:rankOrder(n, kept, ks, order[:n])]
	end := st[BeamsEndTs]
	fin, maxCand := int(st[BeamsFinished]), int(st[BeamsMaxCand])
	var next []int
	for _, i := range order {
		if t := tok[i]; t == io.EOT || (end > 0 && t >= end) {
			if fin < maxCand && fin < io.Fin {
				l := c
				if t != io.EOT {
					l++
				}
				io.addFinished(fin, row(kb[i]), t, l, ks[i])
				fin++
			}
			continue
		}
		next = append(next, i)
		if len(next) == nb {
			break
		}
	}
	st[BeamsFinished] = int32(fin)
	if len(next) == 0 {
		st[BeamsStatus] = BeamsEnded
		return
	}
	for live := len(next); len(next) < nb; {
		next = append(next, next[len(next)%live])
	}
	old := make([]int32, nb*c) // the beams' rows before the step
	for b := range nb {
		copy(old[b*c:], row(b))
	}
	src := make([]int, nb)
	for d, i := range next {
		src[d] = kb[i]
		r := io.Hist[d*capTok : d*capTok+c+1]
		copy(r, old[src[d]*c:src[d]*c+c])
		r[c] = tok[i]
		sums[d] = int32(math.Float32bits(ks[i]))
		io.Src[d], io.Next[d] = int32(src[d]), tok[i]
	}
	for d := nb; d < rows; d++ {
		io.Src[d], io.Next[d] = int32(d), io.EOT // a token to embed
	}
	c++
	st[BeamsCount] = int32(c)
	switch {
	case fin >= maxCand:
		st[BeamsStatus] = BeamsEnough
	case c >= int(st[BeamsLimit]):
		st[BeamsStatus] = BeamsLimitReached
	default:
		return
	}
	if fin >= nb {
		return
	}
	// The stop's live beams by sum; a repeat (the same source row and
	// token as a beam before it) once.
	bs := make([]float32, nb)
	for d := range nb {
		bs[d] = math.Float32frombits(uint32(sums[d]))
	}
	all := make([]bool, nb)
	for d := range all {
		all[d] = true
	}
	ord := make([]int, nb)
	rankOrder(nb, all, bs, ord)
	seen := make([]int, 0, nb)
	for _, d := range ord {
		if fin >= nb || fin >= io.Fin {
			break
		}
		dup := false
		for _, e := range seen {
			if io.Next[e] == io.Next[d] && eqOld(old, c-1, src[e], src[d]) {
				dup = true
				break
			}
		}
		seen = append(seen, d)
		if dup {
			continue
		}
		io.addFinished(fin, io.Hist[d*capTok:d*capTok+c-1], io.Next[d], c, bs[d])
		fin++
	}
	st[BeamsFinished] = int32(fin)
}

// eqOld says whether rows a and b of old (nb rows of c tokens) are equal.
func eqOld(old []int32, c, a, b int) bool {
	ra, rb := old[a*c:a*c+c], old[b*c:b*c+c]
	for i := range ra {
		if ra[i] != rb[i] {
			return false
		}
	}
	return true
}

// addFinished writes finished entry e: toks, then t unless it is EOT
// (length l), and its sum.
func (io *BeamsIO) addFinished(e int, toks []int32, t int32, l int, sum float32) {
	w := io.St[BeamsHeader+len(io.Src)+e*(io.CapTok+2):]
	w[0], w[1] = int32(l), int32(math.Float32bits(sum))
	copy(w[2:], toks)
	if l > len(toks) {
		w[2+len(toks)] = t
	}
}

// rankOrder writes the indices i < n with use[i] into out by score,
// descending, ties (and NaNs, which rank last) by index, and returns how
// many: each one's rank counts those before it, as a GPU thread per
// candidate does.
func rankOrder(n int, use []bool, score []float32, out []int) int {
	m := 0
	for i := range n {
		if !use[i] {
			continue
		}
		m++
		r, ki := 0, rankKey(score[i])
		for x := range n {
			if kx := rankKey(score[x]); use[x] && (kx > ki || (kx == ki && x < i)) {
				r++
			}
		}
		out[r] = i
	}
	return m
}

// rankKey orders scores as integers (the GPUs' kernel compares these, not
// floats, which fast math may not order at infinities): float order, −0
// as +0, NaN as −Inf.
func rankKey(f float32) int32 {
	b := math.Float32bits(f)
	switch {
	case b&0x7fffffff > 0x7f800000:
		b = 0xff800000
	case b == 0x80000000:
		b = 0
	}
	if int32(b) < 0 {
		return int32(b) ^ 0x7fffffff
	}
	return int32(b)
}

// BeamsFinishedSeq returns finished entry e of a WhisperBeams state of
// rows beams: its tokens (aliasing st) and sum.
func BeamsFinishedSeq(st []int32, rows, capTok, e int) ([]int32, float32, bool) {
	w := st[BeamsHeader+rows+e*(capTok+2):]
	l := int(w[0])
	if l < 0 || l > capTok {
		return nil, 0, false
	}
	return w[2 : 2+l], math.Float32frombits(uint32(w[1])), true
}
