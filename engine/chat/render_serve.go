package chat

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// init turns any binary linking this package into the template renderer
// when started with the hidden subcommand (RenderContext starts it): doing
// it here, before main, means the app, `hark` and every test binary serve
// it without wiring, and nothing else of the program starts.
func init() {
	if len(os.Args) == 2 && os.Args[1] == renderArg {
		os.Exit(serveRender(os.Stdin, os.Stdout))
	}
}

// serveRender renders one request under the memory bound; the parent
// kills it past the deadline (and it exits by itself shortly after, in
// case the parent is gone).
func serveRender(in io.Reader, out io.Writer) int {
	debug.SetMaxStack(64 << 20)
	debug.SetMemoryLimit(renderMemory / 2)
	enc := json.NewEncoder(out)
	reply := func(r renderReply) int {
		if err := enc.Encode(r); err != nil {
			return 1
		}
		return 0
	}
	var req renderRequest
	if err := json.NewDecoder(io.LimitReader(in, 64<<20)).Decode(&req); err != nil {
		return reply(renderReply{Err: "chat: bad render request: " + err.Error()})
	}
	if req.Timeout > 0 {
		time.AfterFunc(time.Duration(req.Timeout)+time.Second, func() { os.Exit(3) })
	}
	go watchMemory(renderMemory, func() { reply(renderReply{Kind: "memory", Err: "memory"}); os.Exit(4) })
	tpl, err := newHere(req.Name, req.Source, SpecialTokens{BOS: req.BOS, EOS: req.EOS})
	if err != nil || req.ParseOnly {
		return reply(renderReply{Err: errString(err)})
	}
	tpl.Now = func() time.Time { return req.Now }
	var vars map[string]any
	if req.Vars != nil {
		vars, _ = req.Vars.decode().(map[string]any)
	}
	s, err := tpl.renderHere(req.Messages, vars, req.AddGenerationPrompt)
	switch {
	case err == nil:
		return reply(renderReply{Out: s})
	case errors.Is(err, ErrTemplate):
		return reply(renderReply{Kind: "template", Err: err.Error()})
	}
	return reply(renderReply{Err: err.Error()})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// watchMemory calls over when the heap passes max. A heap watchdog rather
// than RLIMIT_AS: that one is not enforced on macOS, and on Linux the Go
// runtime's own address-space reservations (thread stacks under cgo) make
// any tight limit fail threads rather than the template.
func watchMemory(max uint64, over func()) {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	for range time.Tick(2 * time.Millisecond) {
		metrics.Read(s)
		if s[0].Value.Uint64() > max {
			over()
		}
	}
}
