package serve

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// ignore_eos (Hark's extension) runs a generation through the end-of-text
// token to exactly max_tokens: with a bias that makes that token (id 2,
// stories260K's </s>) certain, the request stops at once without it and
// runs its whole length with it. Without max_tokens it is refused.
func TestIgnoreEOS(t *testing.T) {
	_, url := startServer(t, Config{})
	run := func(body string) (int, string) {
		t.Helper()
		code, b := postJSON(t, url+"/v1/completions", body)
		require.Equal(t, 200, code, "%s", b)
		var r struct {
			Choices []struct {
				FinishReason string `json:"finish_reason"`
			} `json:"choices"`
			Usage usage `json:"usage"`
		}
		require.NoError(t, json.Unmarshal(b, &r))
		return r.Usage.CompletionTokens, r.Choices[0].FinishReason
	}
	n, fin := run(`{"model":"stories","prompt":"Once upon a time","temperature":0,"max_tokens":40,"logit_bias":{"2":100}}`)
	require.Equal(t, "stop", fin)
	require.Equal(t, 1, n)
	n, fin = run(`{"model":"stories","prompt":"Once upon a time","temperature":0,"max_tokens":40,"logit_bias":{"2":100},"ignore_eos":true}`)
	require.Equal(t, 40, n)
	require.Equal(t, "length", fin)

	code, b := postJSON(t, url+"/v1/chat/completions", `{"model":"stories","messages":[{"role":"user","content":"hi"}],"ignore_eos":true}`)
	e := requireAPIError(t, code, 400, b)
	require.Equal(t, "ignore_eos", e["param"])
	code, b = postJSON(t, url+"/v1/completions", `{"model":"stories","prompt":"x","max_tokens":4,"ignore_eos":"yes"}`)
	e = requireAPIError(t, code, 400, b)
	require.Equal(t, "ignore_eos", e["param"])
}
