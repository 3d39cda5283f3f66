package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/harkapp/hark/engine/runtime"
	"github.com/harkapp/hark/engine/whisper"
	"github.com/harkapp/hark/engine/whisper/mel"
	"github.com/harkapp/hark/internal/rewrite"
	"github.com/harkapp/hark/internal/speakers"
	"github.com/harkapp/hark/internal/vocab"
)

// Response formats of the audio endpoints.
var audioFormats = []string{"json", "text", "srt", "verbose_json", "vtt"}

// audioRequest is the multipart form of a transcription.
type audioRequest struct {
	model, language, prompt, format string
	vocabulary                      []vocab.Term // the "vocabulary" field: one term a line
	temperature                     float32
	words, segments                 bool
	file                            string // the upload, saved to a temporary file
	// channels: the "channels" field, each channel's speaker (nil: the
	// file is transcribed as one voice; see audio_channels.go).
	channels []int
}

func (s *Server) transcriptions(w http.ResponseWriter, r *http.Request) {
	s.audio(w, r, "transcribe")
}

func (s *Server) translations(w http.ResponseWriter, r *http.Request) {
	s.audio(w, r, "translate")
}

func tooLarge(limit int64) error {
	return newError(http.StatusRequestEntityTooLarge, "file", "file_too_large", fmt.Sprintf("The upload is over the limit of %d bytes", limit))
}

// readAudioForm reads the multipart form, streaming the file part to a
// temporary file (uploads can be large) and the small fields to memory.
func (s *Server) readAudioForm(w http.ResponseWriter, r *http.Request) (*audioRequest, error) {
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, newError(http.StatusUnsupportedMediaType, "", "unsupported_media_type", "Content-Type must be multipart/form-data with a boundary")
	}
	limit := s.cfg.MaxUpload
	if r.ContentLength > limit+1<<20 { // the form's other fields are small
		return nil, tooLarge(limit)
	}
	body := http.MaxBytesReader(w, r.Body, limit+1<<20)
	mr := multipart.NewReader(body, params["boundary"])
	req := &audioRequest{format: "json"}
	fail := func(err error) (*audioRequest, error) {
		if req.file != "" {
			os.Remove(req.file)
		}
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, tooLarge(limit)
		}
		return nil, err
	}
	temp := ""
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(badRequest("", "Malformed multipart body: "+err.Error()))
		}
		name := p.FormName()
		if name == "file" {
			if req.file != "" {
				return fail(badRequest("file", "more than one file was uploaded"))
			}
			f, err := os.CreateTemp("", "hark-upload-*"+safeExt(p.FileName()))
			if err != nil {
				return fail(err)
			}
			req.file = f.Name()
			n, err, cerr := spool(f, p, limit)
			if err != nil {
				return fail(badRequest("file", "Reading the upload failed: "+scrubPath(err, req.file)))
			}
			if cerr != nil {
				return fail(errors.New("storing the upload failed: " + scrubPath(cerr, req.file)))
			}
			if n > limit {
				return fail(tooLarge(limit))
			}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(p, 64<<10))
		if err != nil {
			return fail(badRequest(name, "Reading the form failed: "+err.Error()))
		}
		v := string(b)
		switch name {
		case "model":
			req.model = v
		case "language":
			req.language = strings.TrimSpace(v)
		case "prompt":
			req.prompt = v
		case "vocabulary":
			if req.vocabulary, err = vocab.Parse(v); err != nil {
				return fail(badRequest("vocabulary", err.Error()))
			}
		case "channels":
			if req.channels, err = speakers.Parse(v); err != nil {
				return fail(badRequest("channels", err.Error()))
			}
		case "response_format":
			req.format = v
		case "temperature":
			temp = v
		case "timestamp_granularities[]", "timestamp_granularities":
			switch v {
			case "word":
				req.words = true
			case "segment":
				req.segments = true
			default:
				return fail(badRequest("timestamp_granularities", fmt.Sprintf("unknown timestamp granularity %q (want segment or word)", v)))
			}
		}
	}
	switch {
	case req.file == "":
		return fail(badRequest("file", "you must provide a file"))
	case req.model == "":
		return fail(badRequest("model", "you must provide a model parameter"))
	case !slices.Contains(audioFormats, req.format):
		return fail(badRequest("response_format", fmt.Sprintf("response_format %q is not one of %s", req.format, strings.Join(audioFormats, ", "))))
	}
	if temp != "" {
		t, err := strconv.ParseFloat(temp, 32)
		if err != nil || math.IsNaN(t) || t < 0 || t > 1 {
			return fail(badRequest("temperature", fmt.Sprintf("temperature %q is not a number in [0, 1]", temp)))
		}
		req.temperature = float32(t)
	}
	return req, nil
}

// safeExt keeps an upload's extension (ffmpeg and the decoders look at it)
// when it is short and plain.
func safeExt(name string) string {
	i := strings.LastIndexByte(name, '.')
	if i < 0 || len(name)-i > 8 {
		return ""
	}
	ext := name[i:]
	for _, c := range ext[1:] {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return ""
		}
	}
	return ext
}

func (s *Server) audio(w http.ResponseWriter, r *http.Request, task string) {
	req, err := s.readAudioForm(w, r)
	if err != nil {
		writeError(w, err)
		return
	}
	defer os.Remove(req.file)
	if req.channels != nil && task == "translate" {
		writeError(w, badRequest("channels", "channels cannot be combined with translation (speakers are placed by time in the spoken language)"))
		return
	}
	ctx := r.Context()
	sm, err := s.speech(ctx, req.model)
	if err != nil {
		writeError(w, err)
		return
	}
	defer sm.Release()
	var res *whisper.Result
	var who []string
	if req.channels != nil {
		res, who, err = s.transcribeChannels(ctx, sm, req)
	} else {
		res, err = s.transcribe(ctx, sm, req, task)
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeTranscript(w, res, req, task, who)
}

// transcribe decodes the upload to a spectrogram and transcribes it;
// decoding failures are the client's (400).
func (s *Server) transcribe(ctx context.Context, sm *runtime.SpeechModel, req *audioRequest, task string) (*whisper.Result, error) {
	opt, fix, err := s.transcribeOptions(sm, req, task)
	if err != nil {
		return nil, err
	}
	spec, err := sm.File.FileSpectrogram(req.file, s.cfg.MaxAudioDuration)
	if err != nil {
		return nil, s.decodeError(err, req.file)
	}
	defer spec.Close()
	res, err := sm.File.TranscribeMel(ctx, sm.Model, spec, opt)
	if errors.Is(err, whisper.ErrSilent) || errors.Is(err, whisper.ErrNoAudio) {
		return nil, badRequest("file", err.Error())
	}
	if ctx.Err() != nil {
		return nil, acquireError(context.Cause(ctx))
	}
	if err != nil {
		return nil, err
	}
	if fix != nil {
		fix.ApplyResult(res)
	}
	return res, nil
}

// decodeError is a failure to decode the upload, the client's (400).
func (s *Server) decodeError(err error, file string) error {
	if tl := (*mel.TooLongError)(nil); errors.As(err, &tl) {
		return badRequest("file", fmt.Sprintf("The audio is longer than this server's limit of %v (hark serve --max-audio-duration)", tl.Limit))
	}
	return badRequest("file", "The audio file could not be decoded: "+scrubPath(err, file))
}

// transcribeOptions are a request's decoding options and the rewriter of
// its vocabulary's spellings (nil without one).
func (s *Server) transcribeOptions(sm *runtime.SpeechModel, req *audioRequest, task string) (whisper.TranscribeOptions, *rewrite.Rewriter, error) {
	f := sm.File
	opt := whisper.DefaultTranscribeOptions()
	opt.Temperatures = whisper.FallbackTemperatures(req.temperature)
	opt.BeamSize = s.cfg.WhisperBeam
	opt.WordTimestamps = req.words
	opt.BeforeWindow = sm.Share // a long file takes turns with other requests (a stream)
	opt.Language = req.language
	if task == "translate" {
		if !f.H.Multilingual() {
			return opt, nil, badRequest("model", "Translation needs a multilingual model; this one is English-only")
		}
		opt.Task = "translate"
		opt.Language = "" // the spoken language is detected; the output is English
	}
	if !f.H.Multilingual() {
		opt.Language = "en"
	} else if opt.Language != "" && !slices.Contains(whisper.Languages, opt.Language) {
		return opt, nil, badRequest("language", fmt.Sprintf("unknown language %q (an ISO-639-1 code such as en, de, fr)", req.language))
	}
	if p := strings.TrimSpace(req.prompt); p != "" {
		opt.InitialPrompt = f.Vocab.Encode(" " + p)
	}
	fix, err := steerVocabulary(&opt, f.Vocab, req.vocabulary)
	return opt, fix, err
}

// languageName is the English name of a language code, lower case as in
// OpenAI's verbose_json ("english").
func languageName(code string) string {
	if code == "" {
		return ""
	}
	if n := display.English.Languages().Name(language.Make(code)); n != "" {
		return strings.ToLower(n)
	}
	return code
}

// spool copies an upload into f, at most limit+1 bytes (one more tells
// that it is too large), and closes f. A failed Close is returned apart
// (closeErr): the file may then not hold what was copied.
func spool(f io.WriteCloser, r io.Reader, limit int64) (n int64, err, closeErr error) {
	n, err = io.Copy(f, io.LimitReader(r, limit+1))
	return n, err, f.Close()
}

// writeTranscript answers in the request's format. who, when set, names
// each segment's speaker (the channels field): the text's lines, the
// subtitles' cues and verbose_json's segments and words say who spoke.
func writeTranscript(w http.ResponseWriter, res *whisper.Result, req *audioRequest, task string, who []string) {
	text := strings.TrimSpace(res.Text)
	if who != nil {
		var cues *whisper.Result
		cues, text = labeled(res, who, req.format == "vtt")
		if req.format == "srt" || req.format == "vtt" {
			res = cues
		}
	}
	switch req.format {
	case "json":
		writeJSON(w, http.StatusOK, struct {
			Text string `json:"text"`
		}{text})
	case "text":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, text+"\n") // the client may be gone; nothing to do about it
	case "srt", "vtt":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_ = whisper.Write(w, res, req.format) // the format is checked; a write fails only for a client gone
	case "verbose_json":
		type word struct {
			Word    string  `json:"word"`
			Start   float64 `json:"start"`
			End     float64 `json:"end"`
			Speaker string  `json:"speaker,omitempty"`
		}
		type segment struct {
			whisper.Segment
			Speaker string `json:"speaker,omitempty"`
		}
		out := struct {
			Task     string     `json:"task"`
			Language string     `json:"language"`
			Duration float64    `json:"duration"`
			Text     string     `json:"text"`
			Segments *[]segment `json:"segments,omitempty"` // present (even empty) when asked
			Words    *[]word    `json:"words,omitempty"`
		}{Task: task, Language: languageName(res.Language), Duration: res.Duration, Text: text}
		if req.segments || !req.words {
			// The engine's segments are OpenAI's shape; their words go in
			// "words" only, as OpenAI lists them.
			segs := make([]segment, 0, len(res.Segments))
			for i, s := range res.Segments {
				s.Words = nil
				segs = append(segs, segment{Segment: s, Speaker: speakerOf(who, i)})
			}
			out.Segments = &segs
		}
		if req.words {
			words := []word{}
			for i, s := range res.Segments {
				for _, wd := range s.Words {
					words = append(words, word{strings.TrimSpace(wd.Word), wd.Start, wd.End, speakerOf(who, i)})
				}
			}
			out.Words = &words
		}
		writeJSON(w, http.StatusOK, out)
	}
}
