package platform

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// xgb v1.1.1 reads every event as 32 bytes, but XInput2 events are X
// Generic Events (type 35) that carry more: read through xgb they would
// desynchronise the connection. So the trigger's connection runs xgb over
// geConn, a net.Conn that frames the server's byte stream itself, takes
// the Generic Events out and hands them to onGeneric, and passes the rest
// (replies, errors, core events) on to xgb untouched.
//
// xgb's NewConnNet cannot find the Xauthority cookie for a connection it
// did not dial, so geConn also puts the right cookie into the connection
// setup request.
type geConn struct {
	net.Conn
	auth      xauth
	onGeneric func(ev []byte) // the whole event, header and extra data

	wmu     sync.Mutex
	written bool // the setup request has gone

	rmu     sync.Mutex
	setup   bool   // the setup reply has been read
	pending []byte // framed bytes ready for xgb
}

// xauth is one Xauthority entry's protocol name and data.
type xauth struct {
	name string
	data []byte
}

// xGenericEvent is the Generic Event Extension's event code.
const xGenericEvent = 35

// dialX connects to the X display named by display (DISPLAY's syntax:
// ":0", "unix:0", "host:0", each with an optional ".screen").
func dialX(display string) (net.Conn, string, error) {
	if display == "" {
		return nil, "", ErrNoDisplay
	}
	colon := strings.LastIndex(display, ":")
	if colon < 0 {
		return nil, "", fmt.Errorf("bad DISPLAY %q", display)
	}
	host, num := display[:colon], display[colon+1:]
	if dot := strings.IndexByte(num, '.'); dot >= 0 {
		num = num[:dot]
	}
	if n, err := strconv.Atoi(num); err != nil || n < 0 {
		return nil, "", fmt.Errorf("bad DISPLAY %q", display)
	}
	if i := strings.LastIndex(host, "/"); i >= 0 {
		host = host[i+1:] // "tcp/host" or a launchd path
	}
	var c net.Conn
	var err error
	if host == "" || host == "unix" {
		c, err = net.Dial("unix", filepath.Join("/tmp/.X11-unix", "X"+num))
	} else {
		n, _ := strconv.Atoi(num)
		c, err = net.Dial("tcp", net.JoinHostPort(host, strconv.Itoa(6000+n)))
	}
	if err != nil {
		return nil, "", fmt.Errorf("connecting to X display %q: %w", display, err)
	}
	return c, num, nil
}

// readXauth finds the cookie for display number num on this host in the
// Xauthority file (XAUTHORITY, else ~/.Xauthority); none is not an error
// (servers such as Xvfb need none).
func readXauth(num string) xauth {
	name := os.Getenv("XAUTHORITY")
	if name == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return xauth{}
		}
		name = filepath.Join(home, ".Xauthority")
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return xauth{}
	}
	hostname, _ := os.Hostname()
	return findXauth(b, hostname, num)
}

// findXauth parses an Xauthority file: entries of a big-endian family
// and four length-prefixed strings (address, display number, name, data).
func findXauth(b []byte, hostname, num string) xauth {
	const familyLocal, familyWild = 256, 65535
	r := bytes.NewReader(b)
	str := func() ([]byte, bool) {
		var n uint16
		if binary.Read(r, binary.BigEndian, &n) != nil {
			return nil, false
		}
		s := make([]byte, n)
		_, err := io.ReadFull(r, s)
		return s, err == nil
	}
	for {
		var family uint16
		if binary.Read(r, binary.BigEndian, &family) != nil {
			return xauth{}
		}
		addr, ok1 := str()
		disp, ok2 := str()
		name, ok3 := str()
		data, ok4 := str()
		if !ok1 || !ok2 || !ok3 || !ok4 {
			return xauth{}
		}
		if (family == familyWild || family == familyLocal && string(addr) == hostname) &&
			(len(disp) == 0 || string(disp) == num) {
			return xauth{name: string(name), data: data}
		}
	}
}

// Write puts the cookie into the setup request (xgb's first write, made
// without one) and passes everything else through.
func (g *geConn) Write(p []byte) (int, error) {
	g.wmu.Lock()
	first := !g.written
	g.written = true
	g.wmu.Unlock()
	if !first || g.auth.name == "" {
		return g.Conn.Write(p)
	}
	if len(p) < 12 || p[0] != 'l' {
		return 0, errors.New("x11: unexpected connection setup request")
	}
	pad := func(n int) int { return (n + 3) &^ 3 }
	req := make([]byte, 12+pad(len(g.auth.name))+pad(len(g.auth.data)))
	copy(req, p[:12])
	binary.LittleEndian.PutUint16(req[6:], uint16(len(g.auth.name)))
	binary.LittleEndian.PutUint16(req[8:], uint16(len(g.auth.data)))
	copy(req[12:], g.auth.name)
	copy(req[12+pad(len(g.auth.name)):], g.auth.data)
	if _, err := g.Conn.Write(req); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Read returns framed bytes: the setup reply, then whole replies, errors
// and core events; Generic Events go to onGeneric instead.
func (g *geConn) Read(p []byte) (int, error) {
	g.rmu.Lock()
	defer g.rmu.Unlock()
	for len(g.pending) == 0 {
		if err := g.frame(); err != nil {
			return 0, err
		}
	}
	n := copy(p, g.pending)
	g.pending = g.pending[n:]
	return n, nil
}

// frame reads one unit from the server into pending (or to onGeneric).
func (g *geConn) frame() error {
	if !g.setup {
		head := make([]byte, 8)
		if _, err := io.ReadFull(g.Conn, head); err != nil {
			return err
		}
		body := make([]byte, int(binary.LittleEndian.Uint16(head[6:]))*4)
		if _, err := io.ReadFull(g.Conn, body); err != nil {
			return err
		}
		g.setup = true
		g.pending = append(head, body...)
		return nil
	}
	unit := make([]byte, 32)
	if _, err := io.ReadFull(g.Conn, unit); err != nil {
		return err
	}
	kind := unit[0] & 0x7f
	if kind != 1 && kind != xGenericEvent {
		g.pending = unit // an error or a core event
		return nil
	}
	extra := binary.LittleEndian.Uint32(unit[4:])
	if extra > 1<<20 {
		return fmt.Errorf("x11: a reply of %d words: the stream is out of step", extra)
	}
	whole := make([]byte, 32+int(extra)*4)
	copy(whole, unit)
	if _, err := io.ReadFull(g.Conn, whole[32:]); err != nil {
		return err
	}
	if kind == 1 {
		g.pending = whole
		return nil
	}
	if g.onGeneric != nil {
		g.onGeneric(whole)
	}
	return nil
}
