package filestore

import (
	"context"
	"sync"
)

type progressKey struct{}

// progress counts units of work (files read, partitions built,
// snapshots written) done and known of, for WithProgress.
type progress struct {
	mu          sync.Mutex
	fn          func(done, total int)
	done, total int
}

// WithProgress returns a context under which the store's long scans
// report their progress to fn: Open's read of the log, Entries, Stats,
// Load, LoadAll and CompactOffline. fn is given the units of work done
// and known of so far (files read, partitions built, snapshots
// written), summed over every call made with the context; the total grows
// as a scan learns how much there is. fn is called by one goroutine at a
// time and must not call the Store.
func WithProgress(ctx context.Context, fn func(done, total int)) context.Context {
	if fn == nil {
		return ctx
	}
	return context.WithValue(ctx, progressKey{}, &progress{fn: fn})
}

// progressOf returns the context's progress, or nil (whose methods do
// nothing).
func progressOf(ctx context.Context) *progress {
	p, _ := ctx.Value(progressKey{}).(*progress)
	return p
}

// expect adds n units to the total.
func (p *progress) expect(n int) {
	if p == nil || n == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.total += n
	p.fn(p.done, p.total)
}

// tick marks one unit done.
func (p *progress) tick() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.done++
	p.fn(p.done, p.total)
}
