package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
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

// genParams are the sampling parameters shared by both completion
// endpoints.
type genParams struct {
	Model               string    `json:"model"`
	Stream              bool      `json:"stream"`
	Temperature         *float64  `json:"temperature"`
	TopP                *float64  `json:"top_p"`
	MaxTokens           *int      `json:"max_tokens"`
	MaxCompletionTokens *int      `json:"max_completion_tokens"`
	Stop                *stopList `json:"stop"`
	Seed                *int64    `json:"seed"`
	N                   *int      `json:"n"`
	StreamOptions       *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// maxStops is OpenAI's limit on stop strings.
const maxStops = 4

// options validates the parameters and turns them into generation
// options; defMax is the max_tokens default (0: up to the context).
func (p *genParams) options(defMax int) (llm.GenerateOptions, error) {
	var o llm.GenerateOptions
	if p.Model == "" {
		return o, badRequest("model", "you must provide a model parameter")
	}
	if p.N != nil && *p.N != 1 {
		return o, badRequest("n", "only n=1 is supported")
	}
	o.Sampler.Temperature = 1
	if t := p.Temperature; t != nil {
		if math.IsNaN(*t) || *t < 0 || *t > 2 {
			return o, badRequest("temperature", fmt.Sprintf("temperature %g is outside [0, 2]", *t))
		}
		o.Sampler.Temperature = float32(*t)
	}
	if tp := p.TopP; tp != nil {
		if math.IsNaN(*tp) || *tp <= 0 || *tp > 1 {
			return o, badRequest("top_p", fmt.Sprintf("top_p %g is outside (0, 1]", *tp))
		}
		o.Sampler.TopP = float32(*tp)
	}
	o.MaxTokens = defMax
	mt := p.MaxTokens
	if mt == nil {
		mt = p.MaxCompletionTokens
	}
	if mt != nil {
		if *mt < 1 {
			return o, badRequest("max_tokens", fmt.Sprintf("max_tokens must be at least 1, got %d", *mt))
		}
		o.MaxTokens = *mt
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

// finishReason maps why a generation ended to OpenAI's finish_reason.
func finishReason(r llm.StopReason) string {
	switch r {
	case llm.StopMaxTokens, llm.StopContext:
		return "length"
	}
	return "stop"
}
