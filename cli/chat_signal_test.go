//go:build unix

package cli

import (
	"bufio"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/harkapp/hark/internal/shared"
	"github.com/stretchr/testify/require"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestChatInterrupt sends a real SIGINT while an answer streams: the
// answer stops, the program does not, and the next message is answered.
// stdout is a pipe the test stops reading until the signal has canceled
// the answer (at 3,000 tokens/s a loaded machine's signal delivery could
// otherwise come after all 60 tokens). The answers are bounded at 60 tokens:
// the second must run to the bound, and at 400 it outlasted the exit wait
// on a loaded CI machine (the CPU pool's workers starve each other there).
func TestChatInterrupt(t *testing.T) {
	model := shared.Path(t, "models", "stories260K.gguf")
	canceled := make(chan struct{}, 1)
	chatInterrupted = func() {
		select {
		case canceled <- struct{}{}:
		default:
		}
	}
	t.Cleanup(func() { chatInterrupted = func() {} })
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	var errOut lockedBuffer
	root := NewRoot(outW, &errOut)
	root.SetIn(inR)
	root.SetArgs([]string{"chat", "--model", model, "--temp", "0", "-n", "60", "--ignore-eos", "-v"})
	done := make(chan error, 1)
	go func() { done <- root.Execute(); outW.Close() }()

	_, err := io.WriteString(inW, "Once upon a time\n")
	require.NoError(t, err)
	rd := bufio.NewReader(outR)
	buf := make([]byte, 8)
	_, err = io.ReadFull(rd, buf) // the answer has started
	require.NoError(t, err)
	require.NoError(t, syscall.Kill(syscall.Getpid(), syscall.SIGINT))
	select {
	case <-canceled:
	case <-time.After(shared.Wait(t, 60*time.Second)):
		t.Fatal("Ctrl-C did not cancel the answer")
	}
	var out lockedBuffer
	drained := make(chan struct{})
	go func() { io.Copy(&out, rd); close(drained) }()
	deadline := time.Now().Add(shared.Wait(t, 60*time.Second))
	for !strings.Contains(errOut.String(), "(answer stopped)") {
		require.True(t, time.Now().Before(deadline), "the answer was not stopped: %s", errOut.String())
		time.Sleep(10 * time.Millisecond)
	}
	_, err = io.WriteString(inW, "Lily\n")
	require.NoError(t, err)
	require.NoError(t, inW.Close()) // Ctrl-D
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(shared.Wait(t, 60*time.Second)):
		t.Fatal("hark chat did not exit at end of input")
	}
	<-drained
	require.Greater(t, len(out.String()), 100, "the second answer was written")
	e := errOut.String()
	require.Contains(t, e, "(answer stopped)")
	counts := regexp.MustCompile(`answer: (\d+) tokens`).FindAllStringSubmatch(e, -1)
	require.Len(t, counts, 2)
	n1, _ := strconv.Atoi(counts[0][1])
	n2, _ := strconv.Atoi(counts[1][1])
	require.Less(t, n1, 60, "the interrupted answer stopped early")
	require.Equal(t, 60, n2, "the next answer runs to -n")
}
