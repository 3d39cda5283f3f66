package cpu

import (
	"math"
	"math/bits"
	"sort"
	"unsafe"

	"github.com/harkapp/hark/engine/plan"
)

// candSorter orders candidate token ids by descending logit, ties by the
// lower id; this is "descending probability" of the contract, taken on the
// logits because equal-looking probabilities may come from distinct logits.
type candSorter struct {
	idx []int32
	l   []float32
}

func (s *candSorter) Len() int      { return len(s.idx) }
func (s *candSorter) Swap(i, j int) { s.idx[i], s.idx[j] = s.idx[j], s.idx[i] }
func (s *candSorter) Less(i, j int) bool {
	a, b := s.idx[i], s.idx[j]
	if s.l[a] != s.l[b] {
		return s.l[a] > s.l[b]
	}
	return a < b
}

// sample implements the Sample kernel of the contract with the settings
// the host wrote for the generation (plan.SampleSettings):
//
//  1. logit_bias;
//  2. penalties from the sequence's token counts: each counted token gets
//     the repetition penalty once, then presence + count·frequency;
//  3. temperature (temp <= 0: argmax);
//  4. top-k, softmax over the survivors, top-p, min-p;
//  5. the first token whose cumulative renormalised mass exceeds
//     plan.Uniform(seed, step): in the sorted order when something
//     truncates, in index order when nothing does (no top-k or top-k ≥ n,
//     top-p ≥ 1, min-p off: drawIndex), which samples the same
//     distribution without a sort;
//
// then the drawn token is counted, and its logprobs written when asked.
//
// NaN logits count as -Inf. Only the head of the sorted order matters, so
// candidates are gathered above a logit threshold; the result is the same
// as sorting the whole vocabulary. Without top-k, masses and their sums
// are the MSL kernel's fixed-point integers (drawAll); with top-k, sums
// are in float64, prefix sums in the sorted order.
//
// Scratch (f32[2n]): [0, n) the adjusted logits, [n, 2n) the candidate
// ids (as int32).
//
// With draws bound, each of the m draws takes its slot's records and its
// logits row and scratch (plan.Sample), one after another; a slot or row
// out of range, or a slot drawn twice, is an error.
func (e *Exec) sample(d *plan.Dispatch) error {
	p := plan.DecodeSample(d)
	n := p.N
	if n == 0 {
		return e.errf("sampling from an empty vocabulary")
	}
	draws, slots, rows := 1, 1, 1
	var dw []int32
	var err error
	if present(d, plan.SlotSampleDraws) {
		draws, slots, rows = p.M, p.Slots, p.XRows
		if dw, err = typedSlice[int32](e, d, plan.SlotSampleDraws, satMul(draws, plan.SampleDrawWords)); err != nil {
			return err
		}
		if draws == 0 {
			return nil
		}
	}
	x, err := e.f32(d, plan.SlotSampleX, extent(rows, p.Ldx, n))
	if err != nil {
		return err
	}
	out, err := typedSlice[int32](e, d, plan.SlotSampleOut, slots)
	if err != nil {
		return err
	}
	sw, err := typedSlice[int32](e, d, plan.SlotSampleSettings, satMul(slots, plan.SampleSettingsWords))
	if err != nil {
		return err
	}
	cw := satMul(2, n) + 1
	var counts []int32
	if present(d, plan.SlotSampleCounts) {
		if counts, err = typedSlice[int32](e, d, plan.SlotSampleCounts, satMul(slots, cw)); err != nil {
			return err
		}
	}
	scr, err := e.f32(d, plan.SlotSampleScratch, satMul(draws, satMul(2, n)))
	if err != nil {
		return err
	}
	var lps []float32
	if present(d, plan.SlotSampleLogprobs) {
		if lps, err = e.f32(d, plan.SlotSampleLogprobs, satMul(slots, plan.SampleLogprobWords)); err != nil {
			return err
		}
	}
	if dw != nil {
		if err := e.checkDraws(dw, draws, slots, rows); err != nil {
			return err
		}
	}
	for i := range draws {
		slot, row, step := 0, 0, uint64(p.Step)
		if dw != nil {
			w := dw[i*plan.SampleDrawWords:]
			slot, row, step = int(w[0]), int(w[1]), uint64(uint32(w[2]))
		}
		var lp []float32
		st := &e.settings
		set := sw[slot*plan.SampleSettingsWords : (slot+1)*plan.SampleSettingsWords]
		st.Decode(unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(set))), len(set)))
		var cs []int32
		if counts != nil {
			cs = counts[slot*cw : (slot+1)*cw]
		}
		if st.Logprobs && lps != nil {
			lp = lps[slot*plan.SampleLogprobWords : (slot+1)*plan.SampleLogprobWords]
		}
		xr := x[row*p.Ldx : row*p.Ldx+n]
		tok := e.draw(xr, cs, scr[i*2*n:(i+1)*2*n], st, step)
		out[slot] = tok
		if cs != nil {
			plan.CountSampled(cs, n, tok)
		}
		if lp != nil {
			plan.Logprobs(lp, xr, tok, st.Top)
		}
	}
	return nil
}

// checkDraws rejects a Sample dispatch's draws whose slot or logits row is
// out of range, or whose slots repeat (their counts would depend on the
// order).
func (e *Exec) checkDraws(dw []int32, draws, slots, rows int) error {
	if cap(e.drawSeen) < slots {
		e.drawSeen = make([]bool, slots)
	}
	seen := e.drawSeen[:slots]
	clear(seen)
	for i := range draws {
		w := dw[i*plan.SampleDrawWords:]
		if w[0] < 0 || int(w[0]) >= slots || w[1] < 0 || int(w[1]) >= rows {
			return e.errf("sample draw %d: slot %d of %d, logits row %d of %d", i, w[0], slots, w[1], rows)
		}
		if seen[w[0]] {
			return e.errf("sample draw %d: slot %d drawn twice", i, w[0])
		}
		seen[w[0]] = true
	}
	return nil
}

// adjust writes x with NaN as -Inf, logit_bias and the penalties applied
// into l.
func adjust(l, x []float32, counts []int32, st *plan.SampleSettings) {
	n := len(x)
	for i, v := range x {
		if v != v {
			v = float32(math.Inf(-1))
		}
		l[i] = v
	}
	for i, id := range st.BiasIDs {
		if id >= 0 && int(id) < n {
			l[id] += st.Bias[i]
		}
	}
	if counts == nil || !st.Penalties() {
		return
	}
	rep, pres, freq := st.Repeat, st.Presence, st.Frequency
	penRep := rep != 0 && rep != 1
	d := min(max(int(counts[n]), 0), n)
	for _, id := range counts[n+1 : n+1+d] {
		if id < 0 || int(id) >= n || counts[id] <= 0 {
			continue
		}
		v := l[id]
		if penRep {
			if v > 0 {
				v /= rep
			} else {
				v *= rep
			}
		}
		l[id] = v - (pres + float32(counts[id])*freq)
	}
}

// draw selects the token (steps 1-5 of sample).
func (e *Exec) draw(x []float32, counts []int32, scr []float32, st *plan.SampleSettings, step uint64) int32 {
	n := len(x)
	topK, topP, minP, temp := st.TopK, st.TopP, st.MinP, st.Temp
	l := scr[:n]
	ids := unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(scr[n:]))), n)
	special := len(st.BiasIDs) > 0 || (counts != nil && st.Penalties() && counts[n] > 0)
	src := x // the adjusted logits, NaN possibly still NaN when x itself
	if special {
		adjust(l, x, counts, st)
		src = l
	}
	// 3. temperature
	if temp <= 0 || temp != temp {
		i := plan.ArgmaxRow(src)
		if v := src[i]; v != v || math.IsInf(float64(v), -1) {
			return 0 // every logit -Inf (or NaN): the first
		}
		return int32(i)
	}
	u := float64(plan.Uniform(st.Seed, step))
	if topK > 0 && topK < n && temp >= 1e-3 && temp <= 1e3 {
		if tok, ok := e.drawTopK(src, l, ids, topK, topP, minP, temp, u); ok {
			return tok
		}
	}
	return e.drawScaled(src, l, ids, topK, topP, minP, temp, u)
}

// drawTopK is draw's path with top-k over a moderate temperature: one
// pass over src gathers the tokens above a threshold that rises as
// candidates arrive (the k-th best so far, less a margin so no token whose
// scaled logit could tie with it is lost), so the vocabulary is neither
// copied nor scaled nor sorted. ok is false when the top is infinite
// (draw's general path decides those).
func (e *Exec) drawTopK(src, l []float32, ids []int32, k int, topP, minP, temp float32, u float64) (int32, bool) {
	n := len(src)
	s := &e.sorter
	defer func() { s.idx, s.l = nil, nil }()
	lim := min(max(4*k, 256)&^31, n)
	thr := float32(math.Inf(-1))
	c := 0
	// shrink keeps the candidates that may still be among the best k
	shrink := func() {
		*s = candSorter{idx: ids[:c], l: src}
		selectTop(s, k)
		kth := src[ids[0]] // the heap's root: the worst of the best k
		thr = kth
		if !math.IsInf(float64(kth), 0) {
			thr = kth - (float32(math.Abs(float64(kth)))*(1.0/(1<<20)) + 1e-20)
		}
		kept := k
		for _, id := range ids[k:c] {
			if src[id] >= thr {
				ids[kept] = id
				kept++
			}
		}
		c = kept
		if c > lim/2 { // many ties: give the gathering room
			lim = min(2*c, n)
		}
	}
	// the first lim tokens are all candidates; past them only those above
	// the threshold, found by a vector scan
	start := lim
	for i, v := range src[:start] {
		if v == v {
			ids[c] = int32(i)
			c++
		}
	}
	if c > k {
		shrink()
	}
	main := start + (n-start)&^31
	add := func(i int) {
		if src[i] >= thr { // the threshold may have risen within a block
			ids[c] = int32(i)
			c++
			if c == lim {
				shrink()
			}
		}
	}
	for i := start; i < main; {
		off, mask := scanGE(src[i:main], thr)
		if mask == 0 {
			break
		}
		for ; mask != 0; mask &= mask - 1 {
			add(i + off + bits.TrailingZeros32(mask))
		}
		i += off + 32
	}
	for i := main; i < n; i++ {
		add(i)
	}
	for _, id := range ids[:c] {
		l[id] = src[id] / temp
	}
	*s = candSorter{idx: ids[:c], l: l}
	if c > k {
		selectTop(s, k)
		c = k
	}
	*s = candSorter{idx: ids[:c], l: l}
	sort.Sort(s)
	if c == 0 {
		return 0, true // every logit NaN
	}
	lmax := l[ids[0]]
	if math.IsInf(float64(lmax), 0) {
		return 0, false
	}
	var z float64
	for _, id := range ids[:c] {
		z += math.Exp(float64(l[id] - lmax))
	}
	return cutAndDraw(l, ids[:c], lmax, z, topP, minP, u), true
}

// cutAndDraw applies min-p and top-p to the sorted candidates (z their
// mass) and draws with u.
func cutAndDraw(l []float32, ids []int32, lmax float32, z float64, topP, minP float32, u float64) int32 {
	keep := cut(l, ids, lmax, z, topP, minP)
	mass := z
	if keep < 0 {
		keep = len(ids)
	} else {
		mass = 0
		for _, id := range ids[:keep] {
			mass += math.Exp(float64(l[id] - lmax))
		}
	}
	target := u * mass
	var cum float64
	for _, id := range ids[:keep] {
		cum += math.Exp(float64(l[id] - lmax))
		if cum > target {
			return id
		}
	}
	return ids[keep-1]
}

// cut is how many of the sorted candidates min-p and top-p keep (z the
// softmax's normaliser), or -1 when neither cuts among them.
func cut(l []float32, ids []int32, lmax float32, z float64, topP, minP float32) int {
	var cum float64
	for i, id := range ids {
		ev := math.Exp(float64(l[id] - lmax))
		// the top token has ev = 1, so min-p compares against minP
		if minP > 0 && i > 0 && ev < float64(minP) {
			return i
		}
		cum += ev
		if topP < 1 && cum >= float64(topP)*z {
			return i + 1
		}
	}
	return -1
}

// drawScaled is draw's general path: l is the adjusted logits src (x,
// or l itself when adjusted) with NaN as -Inf, scaled by the temperature.
func (e *Exec) drawScaled(src, l []float32, ids []int32, topK int, topP, minP, temp float32, u float64) int32 {
	n := len(l)
	lmax, lmin := e.scaled.run(e.pool, src, l, temp)
	if math.IsInf(float64(lmax), 0) {
		// every logit -Inf, or some +Inf: the distribution degenerates to
		// the first maximum
		return int32(plan.ArgmaxRow(l))
	}
	if topK > 0 && topK < n {
		return e.drawScaledTopK(l, ids, lmax, topK, topP, minP, u)
	}
	return e.drawAll(l, ids, lmax, lmin, topP, minP, u)
}

// drawAll is drawScaled without top-k: the softmax runs over the whole
// vocabulary, and its walks in the order need only the tokens where the
// top-p cut and the draw land (sampleOrder):
//
//   - z, the normaliser, is summed over the vocabulary (it is the kept
//     mass when nothing is cut); the same pass fills the histogram and
//     counts the tokens min-p keeps (a mass >= plan.SampleMinPFx(minP) is
//     a threshold): keepM, at least the top;
//   - the cut: the first token whose cumulative mass reaches
//     plan.SampleFrac(z, topP) when it comes before rank keepM-1 (keep:
//     its rank+1), else keepM; the kept mass is the cumulative mass
//     through the last kept token;
//   - the draw: the first kept token whose cumulative mass exceeds
//     plan.SampleMul24(kept mass, u·2^24), else the last kept.
//
// When neither cuts (untruncated), the draw walks index order instead
// (drawIndex): no histogram, no order.
//
// Masses, sums and targets are the MSL kernel's fixed-point integers, so
// both backends pick the same token by construction.
func (e *Exec) drawAll(l []float32, ids []int32, lmax, lmin float32, topP, minP float32, u float64) int32 {
	n := len(l)
	o := &e.order
	defer func() { o.l, o.ids = nil, nil }()
	o.l, o.ids, o.lmax, o.scale, o.sorted = l, ids, lmax, newBinScale(lmax, lmin), 0
	minPFx := plan.SampleMinPFx(minP)
	// u is plan.Uniform: a 24-bit integer over 2^24, exactly
	u24 := uint32(u * (1 << 24))
	if untruncated(topP, minPFx) {
		return o.drawIndex(e.pool, u24)
	}
	z, keepM := o.masses(e.pool, minPFx)
	if minPFx == 0 {
		keepM = n
	}
	keepM = max(keepM, 1)
	keep, mass := n, z
	switch {
	case topP < 1:
		_, r, cum := o.locate(plan.SampleFrac(z, topP), false, keepM)
		keep, mass = r+1, cum
	case keepM < n:
		_, r, cum := o.locate(math.MaxUint64, false, keepM)
		keep, mass = r+1, cum
	}
	tok, _, _ := o.locate(plan.SampleMul24(mass, u24), true, keep)
	return tok
}

// drawScaledTopK is drawScaled with top-k (at an extreme temperature, or
// when drawTopK declined): the candidates above a threshold that widens
// until it holds the top k, the best k of them sorted.
func (e *Exec) drawScaledTopK(l []float32, ids []int32, lmax float32, k int, topP, minP float32, u float64) int32 {
	s := &e.sorter
	defer func() { s.idx, s.l = nil, nil }()
	for delta := float32(16); ; delta *= 4 {
		all := delta > 1e4
		thr := lmax - delta
		c := 0
		for i, v := range l {
			if all || v >= thr {
				ids[c] = int32(i)
				c++
			}
		}
		if c < k && !all {
			continue
		}
		*s = candSorter{idx: ids[:c], l: l}
		if c > k {
			selectTop(s, k)
			c = k
		}
		*s = candSorter{idx: ids[:c], l: l}
		sort.Sort(s)
		var z float64
		for _, id := range ids[:c] {
			z += math.Exp(float64(l[id] - lmax))
		}
		return cutAndDraw(l, ids[:c], lmax, z, topP, minP, u)
	}
}

// selectTop moves the k best candidates of s (by its order) to the front
// of s.idx, in no particular order, in O(c log k): a heap of the best k
// seen so far with the worst of them at the root.
func selectTop(s *candSorter, k int) {
	h := s.idx
	// worse(i, j): candidate i ranks after j
	worse := func(i, j int) bool { return s.Less(j, i) }
	down := func(i int) {
		for {
			w := i
			if l := 2*i + 1; l < k && worse(l, w) {
				w = l
			}
			if r := 2*i + 2; r < k && worse(r, w) {
				w = r
			}
			if w == i {
				return
			}
			h[i], h[w] = h[w], h[i]
			i = w
		}
	}
	for i := k/2 - 1; i >= 0; i-- {
		down(i)
	}
	for j := k; j < len(h); j++ {
		if s.Less(j, 0) { // better than the worst kept
			h[0], h[j] = h[j], h[0]
			down(0)
		}
	}
}
