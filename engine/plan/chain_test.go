package plan

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// logExec records the calls an executable gets; logChainer makes it a
// Chainer too (calling done after every chunk, as the CPU backend does).
type logExec struct{ log []string }

func (x *logExec) Run(pass int, v *Vars) error {
	x.log = append(x.log, fmt.Sprintf("run %d@%d", pass, v[VarPos]))
	return nil
}
func (x *logExec) RunSeq(int, []Vars) error { return nil }
func (x *logExec) Write(b BufID, off int64, src []byte) error {
	x.log = append(x.log, fmt.Sprintf("write %d+%d %q", b, off, src))
	return nil
}
func (x *logExec) Read(b BufID, off int64, dst []byte) error {
	copy(dst, "ok")
	x.log = append(x.log, fmt.Sprintf("read %d+%d", b, off))
	return nil
}
func (x *logExec) Close() error { return nil }

type logChainer struct{ *logExec }

func (x logChainer) RunPasses(passes []int, vars []Vars, chunk int, done func(int) bool) (int, error) {
	for i := range passes {
		_ = x.Run(passes[i], &vars[i])
		if (i+1)%chunk == 0 || i+1 == len(passes) {
			if !done(i + 1) {
				return i + 1, nil
			}
		}
	}
	return len(passes), nil
}

// RunChainIO on an executable without IOChainer: the input written
// first, then the steps, the read-back and done after every chunk and the
// last (io.Also's too); done false stops; a Chainer runs the same
// calls; the halt word is left to the backend.
func TestRunChainIOFallbacks(t *testing.T) {
	passes := []int{4, 5, 4, 5, 4}
	vars := make([]Vars, len(passes))
	for i := range vars {
		vars[i][VarPos] = int64(i)
	}
	want := []string{`write 1+8 "in"`, "run 4@0", "run 5@1", "read 2+4", "read 3+12", "done 2", "run 4@2", "run 5@3", "read 2+4",
		"read 3+12", "done 4", "run 4@4", "read 2+4", "read 3+12", "done 5"}
	for _, chain := range []bool{false, true} {
		x := &logExec{}
		var ex Executable = x
		if chain {
			ex = logChainer{x}
		}
		also := make([]byte, 2)
		io := ChainIO{In: 1, InOff: 8, Src: []byte("in"), Out: 2, OutOff: 4, Dst: make([]byte, 2),
			Also: []ChainRead{{Buf: 3, Off: 12, Dst: also}}, Halt: &ChainHalt{Buf: 2}} // a halt these ignore
		done := func(stop int) func(int) bool {
			return func(n int) bool {
				require.Equal(t, "ok", string(io.Dst))
				require.Equal(t, "ok", string(also))
				x.log = append(x.log, fmt.Sprintf("done %d", n))
				return n < stop
			}
		}
		n, err := RunChainIO(ex, passes, vars, 2, &io, done(99))
		require.NoError(t, err)
		require.Equal(t, 5, n)
		require.Equal(t, want, x.log, "chainer %v", chain)

		x.log = nil
		n, err = RunChainIO(ex, passes, vars, 2, &io, done(2))
		require.NoError(t, err)
		require.Equal(t, 2, n, "stopped after the first chunk")
		require.Equal(t, want[:6], x.log)
	}
}
