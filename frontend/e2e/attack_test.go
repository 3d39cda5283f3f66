package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/harkapp/hark/cli"
	"github.com/harkapp/hark/internal/shared"
)

// TestBrowserAttacks: a page in Chromium attacks `hark ui` and `hark
// serve` by DNS rebinding (a hosts-style resolver rule maps rebind.test to
// 127.0.0.1) and by cross-site requests (attack.mjs). Every attack must be
// refused and leave no trace: settings as they were, no history item, the
// in-app API server stopped, no model loaded, the secret file unread. The
// victim's own page still works in the same browser.
func TestBrowserAttacks(t *testing.T) {
	root := repoRoot(t)
	fe := filepath.Join(root, "frontend")
	if _, err := os.Stat(filepath.Join(fe, "node_modules", "playwright-core", "package.json")); err != nil {
		run(t, fe, "npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	}
	models := t.TempDir()
	linkOrCopy(t, shared.Path(t, "models", chatFile), filepath.Join(models, "stories.gguf"))
	assets := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(assets, "index.html"), []byte("<title>Hark</title>"), 0o644))
	secret := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("TOP-SECRET"), 0o600))

	uiURL, _ := startUI(t, models, t.TempDir(), assets)
	serveURL := startServe(t, models)

	out, err := browserScript(t, fe, "attack.mjs", append(os.Environ(), "HARK_URL="+uiURL, "SERVE_URL="+serveURL,
		"SECRET="+secret), t.TempDir(), "")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^RESULT (.*)$`).FindSubmatch(out)
	require.NotNil(t, m, "no RESULT line")
	var res struct {
		OwnPage     any            `json:"ownPage"`
		RebindUI    map[string]any `json:"rebindUI"`
		RebindServe map[string]any `json:"rebindServe"`
		CrossSite   map[string]any `json:"crossSite"`
		Error       string         `json:"error"`
	}
	require.NoError(t, json.Unmarshal(m[1], &res))
	require.Empty(t, res.Error)
	require.EqualValues(t, 200, res.OwnPage, "the victim's own page works")
	require.Len(t, res.RebindUI, 8)
	for k, v := range res.RebindUI {
		require.EqualValues(t, 403, v, "rebinding hark ui: %s", k)
	}
	require.Len(t, res.RebindServe, 3)
	for k, v := range res.RebindServe {
		require.EqualValues(t, 403, v, "rebinding hark serve: %s", k)
	}
	require.Equal(t, "blocked", res.CrossSite["serveRead"], "serve answers no CORS to a foreign page")
	require.Equal(t, "blocked", res.CrossSite["uiRead"])

	// No trace: ask both servers as their legitimate clients.
	base, tok, _ := strings.Cut(uiURL, "/?token=")
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(base + "/?token=" + tok)
	require.NoError(t, err)
	resp.Body.Close()
	callUI := func(name, args string) string {
		resp, err := c.Post(base+"/api/call/"+name, "application/json", strings.NewReader(args))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		require.Equal(t, 200, resp.StatusCode, "%s", b)
		return string(b)
	}
	settings := callUI("Settings.Get", "[]")
	require.Contains(t, settings, `"theme":"system"`, "an attack changed the settings")
	require.Contains(t, settings, `"serverAutoStart":false`)
	require.Contains(t, callUI("Server.Status", "[]"), `"running":false`, "an attack started the API server")
	require.Equal(t, `{"result":[]}`, strings.TrimSpace(callUI("History.List", `["",10,0]`)), "an attack created an item")
	resp, err = c.Get(base + "/media/recording/1")
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NotContains(t, string(b), "TOP-SECRET")
	resp, err = http.Get(serveURL + "/health")
	require.NoError(t, err)
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	var health struct{ Loaded []string }
	require.NoError(t, json.Unmarshal(b, &health), "%s", b)
	require.Empty(t, health.Loaded, "an attack loaded a model")
}

// startServe runs `hark serve` in-process on a free loopback port.
func startServe(t *testing.T, models string) string {
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	root := cli.NewRoot(io.Discard, pw)
	root.SetArgs([]string{"serve", "--addr", "127.0.0.1:0", "--models-dir", models})
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		pw.Close()
		done <- err
	}()
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		re := regexp.MustCompile(`listening on (http://\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(shared.Wait(t, 30*time.Second)):
			t.Error("hark serve did not stop")
		}
	})
	select {
	case u := <-urls:
		return u
	case err := <-done:
		t.Fatalf("hark serve exited: %v", err)
	case <-time.After(shared.Wait(t, 60*time.Second)):
		t.Fatal("hark serve did not start listening")
	}
	return ""
}
