package serve

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each sampling float is checked against its own range (top_p's is open
// at 0) and named in the error; an accepted value reaches the sampler.
func TestSamplingRanges(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		set   func(p *genParams, v *float64)
		param string
		ok    []float64
		bad   []float64
		want  string
	}{
		{func(p *genParams, v *float64) { p.Temperature = v }, "temperature", []float64{0, 2}, []float64{-0.1, 2.1, math.NaN()}, "temperature 2.1 is outside [0, 2]"},
		{func(p *genParams, v *float64) { p.TopP = v }, "top_p", []float64{1, 0.01}, []float64{0, 1.1, math.NaN()}, "top_p 1.1 is outside (0, 1]"},
		{func(p *genParams, v *float64) { p.PresencePenalty = v }, "presence_penalty", []float64{-2, 2}, []float64{-2.1, 2.1, math.NaN()}, "presence_penalty 2.1 is outside [-2, 2]"},
		{func(p *genParams, v *float64) { p.FrequencyPenalty = v }, "frequency_penalty", []float64{-2, 2}, []float64{-2.1, 2.1, math.NaN()}, "frequency_penalty 2.1 is outside [-2, 2]"},
	} {
		for _, v := range c.ok {
			p := genParams{Model: "m"}
			c.set(&p, f(v))
			o, err := p.options(0, nil)
			require.NoError(t, err, "%s %g", c.param, v)
			got := map[string]float32{"temperature": o.Sampler.Temperature, "top_p": o.Sampler.TopP,
				"presence_penalty": o.Sampler.PresencePenalty, "frequency_penalty": o.Sampler.FrequencyPenalty}
			require.Equal(t, float32(v), got[c.param])
		}
		for _, v := range c.bad {
			p := genParams{Model: "m"}
			c.set(&p, f(v))
			_, err := p.options(0, nil)
			var ae *apiError
			require.True(t, errors.As(err, &ae), "%s %g: %v", c.param, v, err)
			require.Equal(t, c.param, *ae.Param)
			require.Equal(t, 400, ae.Status)
		}
		p := genParams{Model: "m"}
		c.set(&p, f(c.bad[1]))
		_, err := p.options(0, nil)
		require.EqualError(t, err, c.want)
	}
	o, err := (&genParams{Model: "m"}).options(0, nil)
	require.NoError(t, err)
	require.Equal(t, float32(1), o.Sampler.Temperature, "temperature defaults to 1")
}

// closeFails is a file whose Close fails, as one on a full disk may.
type closeFails struct{ bytes.Buffer }

func (*closeFails) Close() error { return errors.New("no space left on device") }

// An upload whose file cannot be closed is not taken as stored: spool
// reports the Close apart from the copy, and the size reaches limit+1
// only when the upload is over the limit.
func TestSpoolReportsClose(t *testing.T) {
	var f closeFails
	n, err, cerr := spool(&f, strings.NewReader("0123456789"), 4)
	require.NoError(t, err)
	require.EqualError(t, cerr, "no space left on device")
	require.Equal(t, int64(5), n)
	require.Equal(t, "01234", f.String())
}
