package app

import (
	"context"
	"encoding/json"
	"errors"
	"log"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/harkapp/hark/internal/version"
	"github.com/harkapp/hark/update"
)

// EnvUpdateFeed points the update check at another releases feed (a
// mirror, or a test server) instead of update.DefaultFeed.
const EnvUpdateFeed = "HARK_UPDATE_FEED"

// updateInterval: the feed is read at most once a day.
const updateInterval = 24 * time.Hour

// UpdateState is what the UI shows of the update check. Nothing is
// requested from the network until Enabled is set by the user (the app
// asks once, at first launch: Asked records the answer was given).
type UpdateState struct {
	Current   string          `json:"current"`
	Asked     bool            `json:"asked"`
	Enabled   bool            `json:"enabled"`
	LastCheck int64           `json:"lastCheck"` // Unix ms, 0 = never
	Available *update.Release `json:"available,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// Updates is the opt-in update check (Settings > About): at most once a
// day it reads the releases feed; a download is verified against the
// release's signed SHA256SUMS (package update) and left in the Downloads
// folder for the user to open; installing in place is not done.
type Updates struct {
	path      string // <data>/update.json
	checker   *update.Checker
	downloads func() (string, error)
	emit      Emitter
	now       func() time.Time

	mu sync.Mutex
	st UpdateState
}

func newUpdates(dataDir string, emit Emitter) *Updates {
	key, err := update.ParseKey(update.PublicKey)
	if err != nil {
		panic(err) // the built-in key is checked by update's tests
	}
	u := &Updates{
		path:    filepath.Join(dataDir, "update.json"),
		checker: &update.Checker{Feed: os.Getenv(EnvUpdateFeed), Current: version.Version, Key: key},
		downloads: func() (string, error) {
			home, err := os.UserHomeDir()
			return filepath.Join(home, "Downloads"), err
		},
		emit: emit,
		now:  time.Now,
	}
	if b, err := os.ReadFile(u.path); err == nil {
		_ = json.Unmarshal(b, &u.st) // a damaged file means "not asked yet"
	}
	return u
}

// State is the consent, the last check and the release found, if newer.
func (u *Updates) State() UpdateState {
	u.mu.Lock()
	defer u.mu.Unlock()
	st := u.st
	st.Current = u.checker.Current
	return st
}

// SetEnabled records the user's answer: on turns the daily check on (the
// first check runs now), off turns it off and forgets what was found.
func (u *Updates) SetEnabled(on bool) (UpdateState, error) {
	u.mu.Lock()
	u.st.Asked, u.st.Enabled = true, on
	if !on {
		u.st.Available, u.st.Error = nil, ""
	}
	err := u.saveLocked()
	u.mu.Unlock()
	if err != nil {
		return u.State(), err
	}
	if on {
		return u.CheckNow()
	}
	return u.State(), nil
}

// CheckNow reads the feed now (only when the user turned the check on).
func (u *Updates) CheckNow() (UpdateState, error) {
	u.mu.Lock()
	enabled := u.st.Enabled
	u.mu.Unlock()
	if !enabled {
		return u.State(), errors.New("the update check is off (turn it on in Settings > About)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return u.check(ctx)
}

func (u *Updates) check(ctx context.Context) (UpdateState, error) {
	rel, newer, err := u.checker.Check(ctx)
	u.mu.Lock()
	u.st.LastCheck = u.now().UnixMilli()
	u.st.Error = ""
	if err != nil {
		u.st.Error = err.Error()
	} else if newer {
		u.st.Available = rel
	} else {
		u.st.Available = nil
	}
	serr := u.saveLocked()
	u.mu.Unlock()
	st := u.State()
	if st.Available != nil {
		u.emit.Emit(EventUpdateAvailable, st)
	}
	if err == nil {
		err = serr
	}
	return st, err
}

// maybeCheck is the daily background check: nothing unless enabled and
// the last check is a day old.
func (u *Updates) maybeCheck(ctx context.Context) {
	u.mu.Lock()
	due := u.st.Enabled && u.now().Sub(time.UnixMilli(u.st.LastCheck)) >= updateInterval
	u.mu.Unlock()
	if due {
		// The check's own failure is in the state the UI shows; this
		// also catches one of saving it.
		if _, err := u.check(ctx); err != nil {
			log.Printf("hark: update check: %v", err)
		}
	}
}

// Download fetches the named file of the available release into the
// Downloads folder, verified against the signed SHA256SUMS, and returns
// its path.
func (u *Updates) Download(name string) (string, error) {
	u.mu.Lock()
	rel := u.st.Available
	u.mu.Unlock()
	if rel == nil {
		return "", errors.New("no update is available")
	}
	dir, err := u.downloads()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	return u.checker.Download(ctx, rel, name, dir)
}

func (u *Updates) saveLocked() error {
	b, err := json.MarshalIndent(u.st, "", "  ")
	if err != nil {
		return err
	}
	tmp := u.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, u.path)
}

// checkUntilClose runs the daily check (when the user turned it on) at
// start and then hourly, until Close.
func (u *Updates) checkUntilClose(l *lifetime) {
	l.background(func() {
		t := time.NewTicker(time.Hour)
		defer t.Stop()
		for {
			u.maybeCheck(l.ctx)
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
		}
	})
}
