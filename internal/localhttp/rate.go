package localhttp

import (
	"sync"
	"time"
)

// Limiter admits at most N events in any window of Per (a sliding log:
// the counts are small, e.g. 20 uploads a minute).
type Limiter struct {
	N   int
	Per time.Duration

	mu   sync.Mutex
	past []time.Time
	now  func() time.Time // tests
}

// Allow reports whether one more event fits, and records it if so.
func (l *Limiter) Allow() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	if l.now != nil {
		now = l.now()
	}
	keep := l.past[:0]
	for _, t := range l.past {
		if now.Sub(t) < l.Per {
			keep = append(keep, t)
		}
	}
	l.past = keep
	if len(l.past) >= l.N {
		return false
	}
	l.past = append(l.past, now)
	return true
}
