// Package control is the running app's local control socket: `hark
// dictate start|stop|toggle|cancel|status` (and the desktop shortcuts
// bound to it on Wayland) drive dictation in the app or `hark ui` that
// holds the data folder. The socket lives in the data folder beside the
// single-instance lock, owner-only; a request is one line naming a
// command, the answer one line of JSON.
package control

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// SocketName is the socket's file name in the data folder.
const SocketName = "hark.sock"

// Commands are the requests the socket answers (URLs: fewer, url.go).
var Commands = []string{"start", "stop", "toggle", "cancel", "status", "paste-last"}

// MeetingCommands are the socket's meeting requests (`hark meeting`).
var MeetingCommands = []string{"meeting-start", "meeting-stop", "meeting-status", "meeting-resume", "meeting-finish"}

// MeetingIDCommands may name a meeting after a space ("meeting-resume
// 20260102-150405"); the others take nothing.
var MeetingIDCommands = []string{"meeting-resume", "meeting-finish"}

// maxID bounds a meeting ID in a request.
const maxID = 40

// SplitCommand splits a request into its command and its argument (a
// meeting ID, or ""). ok is false for a request that is not one of
// Commands or MeetingCommands, or whose argument is not an ID: letters,
// digits, '-' and '_', up to maxID, starting with a letter or digit.
func SplitCommand(line string) (cmd, arg string, ok bool) {
	cmd, arg, _ = strings.Cut(line, " ")
	if !slices.Contains(Commands, cmd) && !slices.Contains(MeetingCommands, cmd) {
		return cmd, arg, false
	}
	if arg == "" {
		return cmd, "", true
	}
	return cmd, arg, slices.Contains(MeetingIDCommands, cmd) && validID(arg)
}

func validID(id string) bool {
	if len(id) > maxID {
		return false
	}
	for i, c := range id {
		alnum := c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !alnum && (i == 0 || c != '-' && c != '_') {
			return false
		}
	}
	return true
}

// Reply is the answer to a command.
type Reply struct {
	// State is the dictation state after the command (idle, recording,
	// transcribing).
	State string `json:"state"`
	// Text is the transcript, for stop (which waits for it) and status
	// (the last one).
	Text  string `json:"text,omitempty"`
	Error string `json:"error,omitempty"`
}

// Handler runs a command (one of Commands or MeetingCommands, an ID
// after a MeetingIDCommands one: SplitCommand) in the app.
type Handler func(cmd string) Reply

// maxLine bounds a request: the longest command, an ID and its newline.
const maxLine = 64

// ioTimeout bounds reading a request and writing its answer; the command
// itself (stop waits for the transcript) is not bounded here.
const ioTimeout = 5 * time.Second

// Server is a listening control socket.
type Server struct {
	ln   net.Listener
	path string
	wg   sync.WaitGroup
}

// Listen opens the control socket in dir and serves h until Close. The
// caller holds dir's single-instance lock, so a socket file already there
// is a dead app's and is replaced.
func Listen(dir string, h Handler) (*Server, error) {
	path := filepath.Join(dir, SocketName)
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("control: removing a stale socket: %w", err)
	}
	ln, err := listenOwnerOnly(path)
	if err != nil {
		return nil, fmt.Errorf("control: %w", err)
	}
	s := &Server{ln: ln, path: path}
	s.wg.Add(1)
	go s.serve(h)
	return s, nil
}

// Path is the socket's path.
func (s *Server) Path() string { return s.path }

func (s *Server) serve(h Handler) {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(50 * time.Millisecond) // out of descriptors, say: don't spin
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			s.answer(c, h)
		}()
	}
}

// answer reads one command from c and writes the handler's reply.
func (s *Server) answer(c net.Conn, h Handler) {
	if !sameUser(c) {
		writeReply(c, Reply{Error: "refused: the control socket answers its owner only"})
		return
	}
	if c.SetReadDeadline(time.Now().Add(ioTimeout)) != nil {
		return // the connection is gone
	}
	line, err := bufio.NewReaderSize(io.LimitReader(c, maxLine), maxLine).ReadString('\n')
	if err != nil {
		writeReply(c, Reply{Error: "bad request: one line naming a command is expected"})
		return
	}
	cmd := strings.TrimSpace(line)
	if name, arg, ok := SplitCommand(cmd); !ok {
		if arg != "" && slices.Contains(MeetingIDCommands, name) {
			writeReply(c, Reply{Error: fmt.Sprintf("%s: %q is not a meeting ID", name, arg)})
			return
		}
		writeReply(c, Reply{Error: fmt.Sprintf("unknown command %q (want one of %s)", cmd, strings.Join(slices.Concat(Commands, MeetingCommands), ", "))})
		return
	}
	writeReply(c, h(cmd))
}

func writeReply(c net.Conn, r Reply) {
	// A client that left or stalls past the deadline is not answered;
	// the server has nothing else to tell it.
	_ = c.SetWriteDeadline(time.Now().Add(ioTimeout))
	b, _ := json.Marshal(r)
	_, _ = c.Write(append(b, '\n'))
}

// Close stops listening, waits for requests in progress and removes the
// socket file.
func (s *Server) Close() error {
	err := s.ln.Close()
	s.wg.Wait()
	os.Remove(s.path)
	return err
}

// ErrNotRunning is returned by Send when no app holds the data folder.
var ErrNotRunning = errors.New("Hark is not running") //nolint:staticcheck // ST1005: "Hark" is the app's name

// Send sends cmd to the app holding dir and returns its reply (an error
// reply is returned as an error too). wait bounds the whole exchange.
func Send(dir, cmd string, wait time.Duration) (Reply, error) {
	path := filepath.Join(dir, SocketName)
	c, err := net.DialTimeout("unix", path, ioTimeout)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || isRefused(err) {
			return Reply{}, fmt.Errorf("%w (no app or `hark ui` is using the data folder %s): start it first", ErrNotRunning, dir)
		}
		return Reply{}, fmt.Errorf("control: %w", err)
	}
	defer c.Close()
	if err := c.SetDeadline(time.Now().Add(wait)); err != nil {
		return Reply{}, fmt.Errorf("control: %w", err)
	}
	if _, err := io.WriteString(c, cmd+"\n"); err != nil {
		return Reply{}, fmt.Errorf("control: %w", err)
	}
	line, err := bufio.NewReader(io.LimitReader(c, 1<<20)).ReadBytes('\n')
	if err != nil {
		return Reply{}, fmt.Errorf("control: no answer from the app: %w", err)
	}
	var r Reply
	if err := json.Unmarshal(line, &r); err != nil {
		return Reply{}, fmt.Errorf("control: bad answer from the app: %w", err)
	}
	if r.Error != "" {
		return r, errors.New(r.Error)
	}
	return r, nil
}
