package plan

// RunChainIO runs step i as passes[i] with vars[i] on x, chunk steps at a
// time: io.Src written first, and after every chunk (and the last, shorter
// one) io.Dst and io.Also read and done called, which returns false to
// stop; io.Halt is left to an IOChainer that honours it. It
// returns the steps completed, in the cheapest way x offers: IOChainer
// (the copies inside the chunks' waits), Chainer with a Write and a Read a
// chunk, or one Run a step.
func RunChainIO(x Executable, passes []int, vars []Vars, chunk int, io *ChainIO, done func(completed int) bool) (int, error) {
	chunk = max(chunk, 1)
	if c, ok := x.(IOChainer); ok {
		return c.RunPassesIO(passes, vars, chunk, io, done)
	}
	if len(io.Src) > 0 {
		if err := x.Write(io.In, io.InOff, io.Src); err != nil {
			return 0, err
		}
	}
	var readErr error
	read := func(completed int) bool {
		if readErr = x.Read(io.Out, io.OutOff, io.Dst); readErr != nil {
			return false
		}
		for _, r := range io.Also {
			if readErr = x.Read(r.Buf, r.Off, r.Dst); readErr != nil {
				return false
			}
		}
		return done(completed)
	}
	if ch, ok := x.(Chainer); ok {
		n, err := ch.RunPasses(passes, vars, chunk, read)
		if err == nil {
			err = readErr
		}
		return n, err
	}
	for i := range passes {
		if err := x.Run(passes[i], &vars[i]); err != nil {
			return i, err
		}
		if (i+1)%chunk == 0 || i+1 == len(passes) {
			if !read(i + 1) {
				return i + 1, readErr
			}
		}
	}
	return len(passes), nil
}
