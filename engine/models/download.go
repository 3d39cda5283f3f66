package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// HuggingFace is the base URL a mirror replaces.
const HuggingFace = "https://huggingface.co"

// EnvMirror overrides the Hugging Face base URL for downloads.
const EnvMirror = "HARK_MIRROR"

// Request is one file to download into a store.
type Request struct {
	Name   string // the model's name in the store
	URL    string
	SHA256 string // hex; empty: unknown, recorded on first download
	Size   int64  // expected bytes, 0 if unknown
}

// Progress is reported while a download runs.
type Progress struct {
	Name  string
	Bytes int64 // bytes on disk, including a resumed prefix
	Total int64 // 0 when unknown
	Rate  float64
	ETA   time.Duration // 0 when unknown
}

// Downloader fetches models with resume, verification and a limit on
// parallel downloads. It is safe for concurrent use.
type Downloader struct {
	Client *http.Client
	// Mirror, when set, replaces https://huggingface.co in URLs.
	Mirror string
	// Retries is how many times a download that made no progress is
	// retried after a dropped connection.
	Retries int
	// Every is the least interval between progress callbacks.
	Every time.Duration
	// IdleTimeout ends a connection that sends no byte for this long once
	// its headers arrived (a stalled server would hang the download
	// forever); the download then resumes from what it has, as after a
	// dropped connection. 0: no bound.
	IdleTimeout time.Duration

	sem chan struct{}
}

// NewDownloader returns a downloader running at most parallel downloads at
// once; proxies come from the environment (HTTPS_PROXY, NO_PROXY...).
func NewDownloader(parallel int) *Downloader {
	if parallel < 1 {
		parallel = 1
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = http.ProxyFromEnvironment
	tr.ResponseHeaderTimeout = time.Minute
	return &Downloader{
		Client:      &http.Client{Transport: tr},
		Mirror:      os.Getenv(EnvMirror),
		Retries:     5,
		Every:       200 * time.Millisecond,
		IdleTimeout: 30 * time.Second,
		sem:         make(chan struct{}, parallel),
	}
}

// ResolveURL applies the mirror to url.
func (d *Downloader) ResolveURL(url string) string {
	if d.Mirror != "" && strings.HasPrefix(url, HuggingFace+"/") {
		return strings.TrimRight(d.Mirror, "/") + strings.TrimPrefix(url, HuggingFace)
	}
	return url
}

// ErrHashMismatch is returned when a download's sha256 is not the expected
// one; the partial file has been deleted.
var ErrHashMismatch = errors.New("models: sha256 mismatch")

func (s *Store) partialPath(name string) string { return filepath.Join(s.Dir, name+".partial") }

// Download fetches r into the store and returns the model's path. An
// interrupted download leaves NAME.partial, which the next call resumes
// with an HTTP Range request. The file is verified (or its hash recorded)
// before it is renamed to its final name.
func (d *Downloader) Download(ctx context.Context, s *Store, r Request, progress func(Progress)) (string, error) {
	if err := ValidateName(r.Name); err != nil {
		return "", err
	}
	if r.SHA256 != "" && !isHex64(r.SHA256) {
		return "", fmt.Errorf("models: %s: bad sha256 %q", r.Name, r.SHA256)
	}
	if r.SHA256 == "" {
		if rec, ok := s.RecordedHash(r.Name); ok {
			r.SHA256 = rec.SHA256 // trust on first use: later downloads must match
		}
	}
	select {
	case d.sem <- struct{}{}:
		defer func() { <-d.sem }()
	case <-ctx.Done():
		return "", ctx.Err()
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return "", err
	}
	e := ".bin"
	if strings.EqualFold(path.Ext(strings.SplitN(r.URL, "?", 2)[0]), ".gguf") {
		e = ".gguf"
	}
	dst := filepath.Join(s.Dir, r.Name+e)
	part := s.partialPath(r.Name)
	url := d.ResolveURL(r.URL)

	total, err := d.fetch(ctx, url, part, r, progress)
	if err != nil {
		return "", err
	}
	if total > 0 {
		if st, err := os.Stat(part); err != nil || st.Size() != total {
			return "", fmt.Errorf("models: %s: download incomplete", r.Name)
		}
	}
	sum, size, err := hashFile(part)
	if err != nil {
		return "", err
	}
	if r.SHA256 != "" && !strings.EqualFold(sum, r.SHA256) {
		removePartial(part)
		return "", fmt.Errorf("%w for %s: got %s, want %s; the download was deleted", ErrHashMismatch, r.Name, sum, r.SHA256)
	}
	// The file must be the kind of model its name promises before it takes
	// that name: a server that answers an error page or another file gets
	// nothing installed.
	if info, err := Inspect(part); err != nil || ext(info.Format) != e {
		removePartial(part)
		if err == nil {
			err = fmt.Errorf("a %s file, not the %s model expected", ext(info.Format), e)
		}
		return "", fmt.Errorf("models: %s: the download is not a usable model (%w); it was deleted", r.Name, err)
	}
	if r.SHA256 == "" {
		if err := s.recordHash(r.Name, Recorded{SHA256: sum, Size: size, URL: r.URL}); err != nil {
			return "", err
		}
	}
	if err := os.Rename(part, dst); err != nil {
		return "", err
	}
	os.Remove(part + validatorExt)
	return dst, nil
}

// validatorExt is the file beside NAME.partial holding the first
// response's ETag or Last-Modified, sent as If-Range when resuming: a file
// changed on the server is then sent whole instead of spliced onto the old
// prefix.
const validatorExt = ".validator"

func removePartial(part string) {
	os.Remove(part)
	os.Remove(part + validatorExt)
}

// validator is the response's strong ETag, else its Last-Modified ("" if
// neither: If-Range cannot be used).
func validator(h http.Header) string {
	if et := h.Get("ETag"); et != "" && !strings.HasPrefix(et, "W/") {
		return et
	}
	return h.Get("Last-Modified")
}

// diskMargin is the free space a download leaves; checkEvery is how often
// (in bytes written) free space is looked at again.
const (
	diskMargin = 64 << 20
	checkEvery = 32 << 20
)

// capWriter writes at most max bytes to w and re-checks free disk space
// as data arrives (another program may fill the disk meanwhile).
type capWriter struct {
	w       io.Writer
	name    string
	dir     string
	max     int64 // < 0: no cap
	n       int64
	checked int64
}

var errTooLong = errors.New("longer than announced")

func (c *capWriter) Write(b []byte) (int, error) {
	if c.max >= 0 && c.n+int64(len(b)) > c.max {
		return 0, permanentError{fmt.Errorf("models: %s: the server sent more than the %d bytes announced: %w", c.name, c.max, errTooLong)}
	}
	if c.n-c.checked >= checkEvery {
		c.checked = c.n
		if free, ok := freeBytes(c.dir); ok && free < diskMargin {
			return 0, permanentError{fmt.Errorf("models: %s: the disk is full (%s free in %s)", c.name, HumanBytes(free), c.dir)}
		}
	}
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// fetch fills part from url, resuming what is there, retrying dropped
// connections; it returns the total size when the server said it.
func (d *Downloader) fetch(ctx context.Context, url, part string, r Request, progress func(Progress)) (int64, error) {
	failures := 0
	for {
		before := fileSize(part)
		total, err := d.fetchOnce(ctx, url, part, r, progress)
		if err == nil {
			return total, nil
		}
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		var pe permanentError
		if errors.As(err, &pe) {
			return 0, pe.error
		}
		if fileSize(part) > before {
			failures = 0 // progress was made: the connection dropped mid-file
		} else {
			failures++
		}
		if failures > d.Retries {
			return 0, fmt.Errorf("models: downloading %s: %w", r.Name, err)
		}
		select {
		case <-time.After(time.Duration(failures) * 100 * time.Millisecond):
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

// permanentError is not worth retrying.
type permanentError struct{ error }

func (p permanentError) Unwrap() error { return p.error }

func (d *Downloader) fetchOnce(ctx context.Context, url, part string, r Request, progress func(Progress)) (int64, error) {
	off := fileSize(part)
	if (r.Size > 0 && off > r.Size) || r.SHA256 == "" {
		// Larger than the file: start again. Without a known hash a
		// partial is never resumed: nothing could tell a spliced file
		// from the real one before its hash is recorded as the truth.
		off = 0
		removePartial(part)
	}
	rctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(rctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, permanentError{err}
	}
	req.Header.Set("User-Agent", "hark")
	if off > 0 {
		req.Header.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-")
		if v, err := os.ReadFile(part + validatorExt); err == nil && len(v) > 0 {
			req.Header.Set("If-Range", string(v))
		}
	}
	resp, err := d.Client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()

	var total int64
	flags := os.O_WRONLY | os.O_CREATE
	switch {
	case resp.StatusCode == http.StatusPartialContent && off > 0:
		start, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if !ok || start != off {
			return 0, fmt.Errorf("models: %s: unexpected Content-Range %q", r.Name, resp.Header.Get("Content-Range"))
		}
		total = size
		flags |= os.O_APPEND
	case resp.StatusCode == http.StatusOK:
		// A server that ignores Range, or whose file changed (If-Range),
		// sends the whole file: start over.
		off = 0
		total = resp.ContentLength
		flags |= os.O_TRUNC
		os.Remove(part + validatorExt)
		if v := validator(resp.Header); v != "" {
			if err := os.WriteFile(part+validatorExt, []byte(v), 0o644); err != nil {
				return 0, permanentError{err}
			}
		}
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable && off > 0:
		// Already complete (or the partial is stale): the size check and
		// hash decide; a stale partial is dropped when the hash fails.
		_, size, ok := parseContentRange(resp.Header.Get("Content-Range"))
		if ok && size == off {
			return size, nil
		}
		removePartial(part)
		return 0, fmt.Errorf("models: %s: server refused to resume", r.Name)
	default:
		err := fmt.Errorf("models: %s: %s from %s", r.Name, resp.Status, url)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			return 0, permanentError{err}
		}
		return 0, err
	}
	if total <= 0 {
		total = r.Size
	}
	if total <= 0 {
		// Neither the catalog nor the server says how long the file is: an
		// endless body would fill the disk.
		return 0, permanentError{fmt.Errorf("models: %s: the server did not say the file's length (Content-Length); refusing an unbounded download", r.Name)}
	}
	if r.Size > 0 && total > 0 && total != r.Size {
		return 0, permanentError{fmt.Errorf("models: %s: the server's file is %d bytes, the catalog says %d", r.Name, total, r.Size)}
	}
	if total > 0 {
		if free, ok := freeBytes(filepath.Dir(part)); ok && free < total-off {
			return 0, permanentError{fmt.Errorf("models: %s needs %s free in %s, only %s left",
				r.Name, HumanBytes(total-off), filepath.Dir(part), HumanBytes(free))}
		}
	}
	f, err := os.OpenFile(part, flags, 0o644)
	if err != nil {
		return 0, permanentError{err}
	}
	pw := &progressWriter{name: r.Name, done: off, total: total, start: time.Now(), base: off, fn: progress, every: d.Every}
	cw := &capWriter{w: io.MultiWriter(f, pw), name: r.Name, dir: filepath.Dir(part), max: total - off}
	var body io.Reader = resp.Body
	if d.IdleTimeout > 0 {
		idle := time.AfterFunc(d.IdleTimeout, func() { cancel(errStalled) })
		defer idle.Stop()
		body = &idleReader{r: resp.Body, t: idle, d: d.IdleTimeout}
	}
	_, cerr := io.Copy(cw, body)
	if errors.Is(context.Cause(rctx), errStalled) && ctx.Err() == nil {
		cerr = fmt.Errorf("models: %s: the server sent nothing for %v", r.Name, d.IdleTimeout)
	}
	pw.report(true)
	if err := f.Sync(); err != nil && cerr == nil {
		cerr = err
	}
	if err := f.Close(); err != nil && cerr == nil {
		cerr = err
	}
	if cerr != nil {
		if errors.Is(cerr, errTooLong) {
			removePartial(part)
		}
		return 0, cerr
	}
	if total > 0 && pw.done != total {
		return 0, fmt.Errorf("models: %s: connection closed at %d of %d bytes", r.Name, pw.done, total)
	}
	return total, nil
}

var errStalled = errors.New("stalled")

// idleReader pushes its timer back on every byte read.
type idleReader struct {
	r io.Reader
	t *time.Timer
	d time.Duration
}

func (i *idleReader) Read(p []byte) (int, error) {
	n, err := i.r.Read(p)
	if n > 0 {
		i.t.Reset(i.d)
	}
	return n, err
}

// parseContentRange reads "bytes START-END/SIZE".
func parseContentRange(h string) (start, size int64, ok bool) {
	h, found := strings.CutPrefix(h, "bytes ")
	if !found {
		return 0, 0, false
	}
	rng, sz, found := strings.Cut(h, "/")
	if !found {
		return 0, 0, false
	}
	if sz != "*" {
		var err error
		if size, err = strconv.ParseInt(sz, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	a, _, _ := strings.Cut(rng, "-")
	if a == "*" {
		return -1, size, true
	}
	start, err := strconv.ParseInt(a, 10, 64)
	return start, size, err == nil
}

type progressWriter struct {
	name              string
	done, total, base int64
	start, last       time.Time
	every             time.Duration
	fn                func(Progress)
}

func (p *progressWriter) Write(b []byte) (int, error) {
	p.done += int64(len(b))
	p.report(false)
	return len(b), nil
}

func (p *progressWriter) report(final bool) {
	if p.fn == nil {
		return
	}
	now := time.Now()
	if !final && now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	pr := Progress{Name: p.name, Bytes: p.done, Total: p.total}
	if el := now.Sub(p.start).Seconds(); el > 0 {
		pr.Rate = float64(p.done-p.base) / el
	}
	if pr.Rate > 0 && p.total > p.done {
		pr.ETA = time.Duration(float64(p.total-p.done) / pr.Rate * float64(time.Second))
	}
	p.fn(pr)
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}

func hashFile(p string) (string, int64, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return "", 0, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

func isHex64(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// HumanBytes formats n as B, KB, MB or GB (powers of 1000).
func HumanBytes(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	}
	return fmt.Sprintf("%d B", n)
}
