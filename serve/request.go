package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/harkapp/hark/engine/llm"
)

// decodeJSON reads a JSON body of at most limit bytes into v: 415 for
// another content type, 413 over the limit, 400 for anything malformed.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if err := requireType(r, "application/json"); err != nil {
		return err
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	dec := json.NewDecoder(body)
	if err := dec.Decode(v); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return newError(http.StatusRequestEntityTooLarge, "", "request_too_large", fmt.Sprintf("The request body is over the limit of %d bytes", limit))
		}
		if errors.Is(err, io.EOF) {
			return badRequest("", "The request body is empty; expected a JSON object")
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			// OpenAI's param is the top-level field; the message names the
			// JSON kind wanted, never a Go type or nested Go field path.
			top := topField(te.Field)
			return badRequest(top, fmt.Sprintf("Invalid type for %q: expected %s", top, jsonKind(te.Type)))
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return badRequest("", fmt.Sprintf("We could not parse the JSON body of your request (at byte %d)", se.Offset))
		}
		return badRequest("", "We could not parse the JSON body of your request: a value has the wrong type or shape")
	}
	if dec.More() {
		return badRequest("", "The request body holds more than one JSON value")
	}
	return nil
}

// topField is the request field a decoding error is in: the first segment
// of its path that is a JSON name. encoding/json puts embedded Go structs
// (genParams) in the path; the API's names are snake_case, so a segment
// with a capital letter is Go's.
func topField(path string) string {
	for _, seg := range strings.Split(path, ".") {
		if seg != "" && strings.ToLower(seg) == seg {
			return seg
		}
	}
	return ""
}

// stopList is OpenAI's stop parameter: a string or a list of strings.
type stopList []string

func (s *stopList) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*s = stopList{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return errors.New("stop must be a string or a list of strings")
	}
	*s = many
	return nil
}

// genParams are the parameters shared by both completion endpoints.
// Fields a request may send that are not listed here or in the endpoint's
// request are ignored, as OpenAI ignores unknown fields: refusing them
// would break clients that send newer ones. Fields that would change the
// output and are not supported are listed (refused) per endpoint.
type genParams struct {
	Model            string             `json:"model"`
	Stream           bool               `json:"stream"`
	Temperature      *float64           `json:"temperature"`
	TopP             *float64           `json:"top_p"`
	MaxTokens        *int               `json:"max_tokens"`
	Stop             *stopList          `json:"stop"`
	Seed             *int64             `json:"seed"`
	N                *int               `json:"n"`
	PresencePenalty  *float64           `json:"presence_penalty"`
	FrequencyPenalty *float64           `json:"frequency_penalty"`
	LogitBias        map[string]float64 `json:"logit_bias"`
	// IgnoreEOS is Hark's extension for load tests (hark bench serve):
	// generation runs through the end-of-turn tokens to max_tokens, so
	// every request has a fixed length. It needs max_tokens.
	IgnoreEOS     *bool `json:"ignore_eos"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	// Informational: accepted, and change nothing here.
	User        string            `json:"user"`
	Metadata    map[string]string `json:"metadata"`
	Store       *bool             `json:"store"`
	ServiceTier *string           `json:"service_tier"`
}

// maxStops is OpenAI's limit on stop strings.
const maxStops = 4

// options validates the parameters and turns them into generation
// options; defMax is the max_tokens default (0: up to the context).
func (p *genParams) options(defMax int, maxTokens *int) (llm.GenerateOptions, error) {
	var o llm.GenerateOptions
	if p.Model == "" {
		return o, badRequest("model", "you must provide a model parameter")
	}
	if p.N != nil && *p.N != 1 {
		return o, badRequest("n", "only n=1 is supported")
	}
	o.Sampler.Temperature = 1
	// Each optional float must lie in [lo, hi] ((lo, hi] for top_p: a
	// zero nucleus keeps nothing).
	for _, f := range []struct {
		name   string
		v      *float64
		to     *float32
		lo, hi float64
		openLo bool
	}{
		{"temperature", p.Temperature, &o.Sampler.Temperature, 0, 2, false},
		{"top_p", p.TopP, &o.Sampler.TopP, 0, 1, true},
		{"presence_penalty", p.PresencePenalty, &o.Sampler.PresencePenalty, -2, 2, false},
		{"frequency_penalty", p.FrequencyPenalty, &o.Sampler.FrequencyPenalty, -2, 2, false},
	} {
		if f.v == nil {
			continue
		}
		if v := *f.v; math.IsNaN(v) || v < f.lo || v > f.hi || f.openLo && v == f.lo {
			open := "["
			if f.openLo {
				open = "("
			}
			return o, badRequest(f.name, fmt.Sprintf("%s %g is outside %s%g, %g]", f.name, v, open, f.lo, f.hi))
		}
		*f.to = float32(*f.v)
	}
	if len(p.LogitBias) > llm.MaxLogitBias {
		return o, badRequest("logit_bias", fmt.Sprintf("logit_bias has %d entries; at most %d are allowed", len(p.LogitBias), llm.MaxLogitBias))
	}
	for k, v := range p.LogitBias {
		id, err := strconv.ParseInt(k, 10, 32)
		if err != nil || id < 0 {
			return o, badRequest("logit_bias", fmt.Sprintf("logit_bias keys are token ids, got %q", k))
		}
		if math.IsNaN(v) || v < -llm.MaxBias || v > llm.MaxBias {
			return o, badRequest("logit_bias", fmt.Sprintf("the bias of token %d, %g, is outside [-%d, %d]", id, v, llm.MaxBias, llm.MaxBias))
		}
		if o.Sampler.LogitBias == nil {
			o.Sampler.LogitBias = map[int32]float32{}
		}
		o.Sampler.LogitBias[int32(id)] = float32(v)
	}
	o.MaxTokens = defMax
	if maxTokens != nil {
		if *maxTokens < 1 {
			return o, badRequest("max_tokens", fmt.Sprintf("max_tokens must be at least 1, got %d", *maxTokens))
		}
		o.MaxTokens = *maxTokens
	}
	if p.IgnoreEOS != nil && *p.IgnoreEOS {
		if maxTokens == nil {
			return o, badRequest("ignore_eos", "ignore_eos needs max_tokens: the generation runs to that length")
		}
		o.IgnoreEOS = true
	}
	if p.Stop != nil {
		if len(*p.Stop) > maxStops {
			return o, badRequest("stop", fmt.Sprintf("at most %d stop sequences are allowed", maxStops))
		}
		o.Stop = *p.Stop
	}
	if p.Seed != nil {
		o.Sampler.Seed = uint64(*p.Seed)
	} else {
		o.Sampler.Seed = uint64(time.Now().UnixNano())
	}
	return o, nil
}

// unsupported is a request field that would change the output in a way
// Hark cannot honour: a request that sets it (to anything but a value
// meaning "off") is refused, naming it, rather than answered as if it
// were not there.
type unsupported struct {
	name string
	raw  json.RawMessage
	off  []string // JSON values that ask for nothing (besides null)
}

// refuse returns the error for the first field set, nil when none is.
func refuse(fields ...unsupported) error {
	for _, f := range fields {
		var c bytes.Buffer
		if len(f.raw) == 0 || json.Compact(&c, f.raw) != nil { // absent (the decoder checked the syntax)
			continue
		}
		if v := c.String(); v == "null" || slices.Contains(f.off, v) {
			continue
		}
		return badRequest(f.name, fmt.Sprintf("%s is not supported by this server", f.name))
	}
	return nil
}

// finishReason maps why a generation ended to OpenAI's finish_reason.
func finishReason(r llm.StopReason) string {
	switch r {
	case llm.StopMaxTokens, llm.StopContext:
		return "length"
	}
	return "stop"
}
