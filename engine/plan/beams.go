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

// beamsCands bounds a step's candidates: BeamsMax beams of BeamsMax+1.
const beamsCands = BeamsMax * (BeamsMax + 1)

// BeamsStep is one step of WhisperBeams (see its contract), written once
// for the CPU backend's kernel and Whisper's host beam search, and in the
// GPU kernel's order (each phase of whisper_beams here in turn), so that
// all rank bit for bit: the same float32 sums, the same order (a
// candidate's rank counts the better ones on rankKey), the same repeats.
// It allocates nothing. The reference's check that a finished sequence is
// new is kept only where it can fail (the live beams added at the stop):
// a sequence finishing now ends in EOT or an end token, where the older
// finished ones are shorter or end where no live beam does.
func BeamsStep(io *BeamsIO) {
	st := io.St
	if st[BeamsStatus] != BeamsRunning {
		return
	}
	rows, capTok := len(io.Src), io.CapTok
	nb, c := int(st[BeamsN]), int(st[BeamsCount])
	if nb < 1 || nb > min(rows, BeamsMax) || c >= capTok || c < 0 {
		st[BeamsStatus] = BeamsLimitReached // no room (the host checks first)
		return
	}
	k := nb + 1
	n := nb * k
	sums := st[BeamsHeader : BeamsHeader+rows]
	hist := func(b, i int) int32 { return io.Hist[b*capTok+i] }
	// rows a and b equal; the candidates
	var eq [BeamsMax * BeamsMax]bool
	for p := range nb * nb {
		a, b := p/nb, p%nb
		eq[p] = true
		for i := 0; i < c && eq[p]; i++ {
			eq[p] = hist(a, i) == hist(b, i)
		}
	}
	var tok [beamsCands]int32
	var score [beamsCands]float32
	for i := range n {
		r := io.Top[(i/k)*io.Ldt:]
		tok[i] = int32(math.Float32bits(r[1+2*(i%k)]))
		score[i] = math.Float32frombits(uint32(sums[i/k])) + r[2+2*(i%k)]
	}
	// a candidate repeating an earlier one's sequence is dropped; the
	// earlier takes the last repeat's score and beam
	same := func(x, i int) bool { return tok[x] == tok[i] && eq[(x/k)*nb+i/k] }
	var ks [beamsCands]float32
	var kb [beamsCands]int // -1: a repeat
	for i := range n {
		kept := true
		for x := 0; x < i && kept; x++ {
			kept = !same(x, i)
		}
		ks[i], kb[i] = score[i], i/k
		for x := i + 1; x < n; x++ {
			if same(x, i) {
				ks[i], kb[i] = score[x], x/k
			}
		}
		if !kept {
			kb[i] = -1
		}
	}
	var use [beamsCands]bool
	for i := range n {
		use[i] = kb[i] >= 0
	}
	var order [beamsCands]int
	kept := rankOrder(n, use[:], ks[:], order[:])
	// the walk: entries added (a row, then a token or -1), the next beams
	end, maxCand := st[BeamsEndTs], int(st[BeamsMaxCand])
	f := int(st[BeamsFinished])
	f0 := f
	var eb, et [beamsCands + BeamsMax]int32
	var next [BeamsMax]int
	live := 0
	for _, i := range order[:kept] {
		if t := tok[i]; t == io.EOT || (end > 0 && t >= end) {
			if f < maxCand && f < io.Fin {
				eb[f-f0], et[f-f0] = int32(kb[i]), t
				l := c + 1
				if t == io.EOT {
					et[f-f0], l = -1, c
				}
				io.entry(f, l, ks[i])
				f++
			}
			continue
		}
		next[live] = i
		live++
		if live == nb {
			break
		}
	}
	var nsrc, ntok [BeamsMax]int32
	status := int32(BeamsRunning)
	if live == 0 {
		status = BeamsEnded
	} else {
		for d := live; d < nb; d++ {
			next[d] = next[d%live]
		}
		for d := range nb {
			i := next[d]
			nsrc[d], ntok[d] = int32(kb[i]), tok[i]
			sums[d] = int32(math.Float32bits(ks[i]))
			io.Src[d], io.Next[d] = nsrc[d], ntok[d]
		}
		for d := nb; d < rows; d++ {
			io.Src[d], io.Next[d] = int32(d), io.EOT // a token to embed
		}
		st[BeamsCount] = int32(c + 1)
		switch {
		case f >= maxCand:
			status = BeamsEnough
		case c+1 >= int(st[BeamsLimit]):
			status = BeamsLimitReached
		}
		if status != BeamsRunning && f < nb {
			// the live beams by sum, a repeat (the same row and token as
			// a beam before it) once
			var bs [BeamsMax]float32
			var all [BeamsMax]bool
			for d := range nb {
				bs[d], all[d] = math.Float32frombits(uint32(sums[d])), true
			}
			var ord [BeamsMax]int
			rankOrder(nb, all[:], bs[:], ord[:])
			for r, d := range ord[:nb] {
				if f >= nb || f >= io.Fin {
					break
				}
				dup := false
				for _, y := range ord[:r] {
					dup = dup || (ntok[y] == ntok[d] && eq[int(nsrc[y])*nb+int(nsrc[d])])
				}
				if dup {
					continue
				}
				eb[f-f0], et[f-f0] = nsrc[d], ntok[d]
				io.entry(f, c+1, bs[d])
				f++
			}
		}
	}
	st[BeamsFinished] = int32(f)
	if status != BeamsRunning {
		st[BeamsStatus] = status
	}
	// token columns: the entries added, then the beams' new rows
	for p := 0; p <= c; p++ {
		var v [BeamsMax]int32
		if p < c {
			for s := range nb {
				v[s] = hist(s, p)
			}
		}
		for e := range f - f0 {
			w := io.St[BeamsHeader+rows+(f0+e)*(capTok+2)+2:]
			if p < c {
				w[p] = v[eb[e]]
			} else if et[e] >= 0 {
				w[p] = et[e]
			}
		}
		if live > 0 {
			for d := range nb {
				if p < c {
					io.Hist[d*capTok+p] = v[nsrc[d]]
				} else {
					io.Hist[d*capTok+p] = ntok[d]
				}
			}
		}
	}
}

// entry writes finished entry e's length and sum (its tokens follow).
func (io *BeamsIO) entry(e, l int, sum float32) {
	w := io.St[BeamsHeader+len(io.Src)+e*(io.CapTok+2):]
	w[0], w[1] = int32(l), int32(math.Float32bits(sum))
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
