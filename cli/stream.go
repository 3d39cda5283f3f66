package cli

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/harkapp/hark/audio"
	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
)

// streamOptions is what `hark stream` was asked.
type streamOptions struct {
	Env
	speechFlags
	src   string // a file, or "-" for PCM on stdin
	json  bool
	speed float64
}

// newStreamCmd builds the command; runF, when not nil, replaces runStream
// (tests).
func newStreamCmd(runF func(*streamOptions) error) *cobra.Command {
	var fl streamOptions
	cmd := &cobra.Command{
		Use:   "stream --model PATH [--json] [--speed N] FILE|-",
		Short: "Transcribe audio as it plays, printing text as it is committed",
		Long: `Play a file (or raw signed 16-bit little-endian 16 kHz mono PCM on stdin,
"-") in real time through the streaming transcriber and print the text as it
is committed, one segment a line, ending with the whole transcript.

With --json every event is a JSON object on its own line:
  {"type": "committed"|"tentative"|"final", "text": ..., "audio_start": s,
   "audio_end": s, "wall": s}
A committed event carries only the newly committed text (never changed
later), a tentative one the whole uncommitted tail, the final one the whole
transcript; audio_end is the end of the audio the text covers and wall the
seconds since playback started, so wall - audio_end is the lag.

Ctrl-C ends the input: the uncommitted tail is decoded and the whole
transcript printed as final, then the exit status is 130 (a second Ctrl-C
quits at once).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			fl.Env, fl.src = envOf(cmd), args[0]
			if err := fl.speechFlags.validate(); err != nil {
				return err
			}
			if !(fl.speed > 0 && fl.speed <= 1000) {
				return fmt.Errorf("--speed %g is outside (0, 1000]", fl.speed)
			}
			if runF != nil {
				return runF(&fl)
			}
			return runStream(&fl)
		},
	}
	addSpeechFlags(cmd, &fl.speechFlags)
	f := cmd.Flags()
	f.BoolVar(&fl.json, "json", false, "print every event as a JSON line")
	f.Float64Var(&fl.speed, "speed", 1, "playback speed (1 = real time, 4 = four times faster)")
	return cmd
}

// streamChunk is how much audio playback hands over at a time: 100 ms.
const streamChunk = whisper.SampleRate / 10

// runStream plays fl.src through the streaming transcriber (cmd carries
// the models-folder and backend flags, the streams and the context).
func runStream(fl *streamOptions) error {
	src := fl.src
	var read func([]float32) (int, error)
	if src == "-" {
		read = pcmReader(bufio.NewReader(fl.In))
	} else {
		s, err := audio.Open16k(src)
		if err != nil {
			return err
		}
		defer s.Close()
		read = s.Read
	}
	path, err := resolveModel(fl.Env, fl.model)
	if err != nil {
		return err
	}
	rt, err := newRuntime(fl.Env, runtime.Options{Threads: fl.threads, WhisperBeams: 1})
	if err != nil {
		return err
	}
	defer rt.Close()
	held, err := rt.Speech(fl.Ctx, path, runtime.Interactive)
	if err != nil {
		return err
	}
	defer held.Release()
	mf := held.File
	sm := whisper.NewStreamModel(mf, held.Model)
	sm.Options.Language = fl.language
	if p := strings.TrimSpace(fl.prompt); p != "" {
		sm.Options.InitialPrompt = mf.Vocab.Encode(" " + p)
	}

	// Ctrl-C ends the input, not the transcription: the uncommitted tail
	// is decoded and the whole transcript printed as final (exit 130). A
	// second Ctrl-C kills the process as usual.
	ctx, stop := signal.NotifyContext(fl.Ctx, os.Interrupt)
	defer stop()
	context.AfterFunc(ctx, stop)
	out := bufio.NewWriter(fl.Out)
	defer out.Flush()
	enc := json.NewEncoder(out)
	start := time.Now()
	emit := func(e whisper.StreamEvent) {
		if fl.json {
			// A failed write sticks in out: the Flush below sees it.
			_ = enc.Encode(whisper.WallEvent{StreamEvent: e, Wall: time.Since(start).Seconds()})
		} else if e.Type == whisper.EventCommitted {
			fmt.Fprintln(out, strings.TrimSpace(e.Text))
		} else {
			return
		}
		if out.Flush() != nil {
			stop() // nothing reaches the reader: end the input as Ctrl-C does
		}
	}
	st := whisper.NewStreamer(sm, whisper.StreamConfig{}, emit)
	in := make(chan []float32, 1024)
	playErr := make(chan error, 1)
	go func() { playErr <- play(ctx, read, fl.speed, start, in) }()
	res, err := st.Run(fl.Ctx, in)
	if err != nil {
		return err
	}
	perr := <-playErr
	interrupted := errors.Is(perr, context.Canceled) && fl.Ctx.Err() == nil
	if perr != nil && !interrupted {
		return fmt.Errorf("%s: %w", src, perr)
	}
	if fl.json {
		emit(whisper.StreamEvent{Type: whisper.EventFinal, Text: res.Text, AudioEnd: res.Duration})
	} else {
		fmt.Fprintln(out, res.Text)
	}
	if err := out.Flush(); err != nil {
		return fmt.Errorf("writing the transcript: %w", err)
	}
	if interrupted {
		return &exitError{code: exitInterrupted, err: errors.New("interrupted")}
	}
	return nil
}

// play sends audio in 100-ms chunks at speed times real time from start,
// closing out at the end or when ctx ends (then with ctx's error). The
// source is read on its own goroutine, so a reader blocked on a quiet
// stdin does not hold up the end.
func play(ctx context.Context, read func([]float32) (int, error), speed float64, start time.Time, out chan<- []float32) error {
	defer close(out)
	type chunk struct {
		x   []float32
		err error
	}
	chunks := make(chan chunk)
	go func() {
		for {
			buf := make([]float32, streamChunk)
			n, err := fill(read, buf)
			select {
			case chunks <- chunk{buf[:n], err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	sent := 0
	for {
		var c chunk
		select {
		case <-ctx.Done():
			return ctx.Err()
		case c = <-chunks:
		}
		if n := len(c.x); n > 0 {
			sent += n
			due := start.Add(time.Duration(float64(sent) / whisper.SampleRate / speed * float64(time.Second)))
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(time.Until(due)):
			}
			out <- c.x
		}
		if errors.Is(c.err, io.EOF) {
			return nil
		}
		if c.err != nil {
			return c.err
		}
	}
}

// fill reads until buf is full, the end (io.EOF, with what was read) or
// an error; a source stuck returning nothing is an error.
func fill(read func([]float32) (int, error), buf []float32) (int, error) {
	n, empty := 0, 0
	for n < len(buf) {
		k, err := read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
		if k == 0 {
			if empty++; empty > 1000 {
				return n, errors.New("the audio decoder returns no samples")
			}
		}
	}
	return n, nil
}

// pcmReader reads s16le mono samples.
func pcmReader(r *bufio.Reader) func([]float32) (int, error) {
	return func(p []float32) (int, error) {
		var b [2]byte
		for i := range p {
			if _, err := io.ReadFull(r, b[:]); err != nil {
				if i > 0 && err == io.EOF {
					return i, nil
				}
				if err == io.ErrUnexpectedEOF {
					err = errors.New("the PCM stream ends in the middle of a sample")
				}
				return i, err
			}
			p[i] = float32(int16(binary.LittleEndian.Uint16(b[:]))) / 32768
		}
		return len(p), nil
	}
}
