package dmap

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"
)

// heldMaps returns every map this member holds.
func (e *Engine) heldMaps() []*heldMap {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*heldMap, 0, len(e.maps))
	for _, c := range e.maps {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Drain waits until a table without this member is installed and no
// partition is held here any more (the caller told membership this
// member is leaving).
func (e *Engine) Drain(ctx context.Context) error {
	if len(e.proto.View().Members()) <= 1 {
		return nil
	}
	for {
		t, ch := e.proto.Table()
		busy := t == nil
		if t != nil {
			for p, rs := range t.Owners {
				if slices.Contains(rs, e.proto.Self()) {
					busy = true
					break
				}
				if e.repl.Replica(p).Busy() {
					busy = true
				}
				if busy {
					break
				}
			}
		}
		if !busy {
			return nil
		}
		select {
		case <-ch:
		case <-time.After(50 * time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops the engine without handing partitions over (the others
// take them as from a failed member): it stops loading and the cluster
// work, flushes and closes every map store, and returns once every
// goroutine the engine started has stopped.
func (e *Engine) Close() error {
	e.Stop()
	e.mu.Lock()
	cores := e.maps
	e.maps = nil
	e.mu.Unlock()
	var errs []error
	// Write-behind queues are stored before the stores close.
	ctx, cancel := context.WithTimeout(context.Background(), e.cfg.OpTimeout)
	defer cancel()
	for _, c := range cores {
		if c.wb != nil {
			if err := c.wb.drain(ctx, true); err != nil {
				e.log.Error("stowage: closing with write-behind records not stored", "map", c.name, "records", c.wb.Len(), "err", err)
				errs = append(errs, err)
			}
		}
	}
	for _, c := range cores {
		if c.store != nil {
			errs = append(errs, c.store.Close())
		}
	}
	return errors.Join(errs...)
}

// Stop is the first half of Close: it refuses new maps, stops the
// cluster work and waits for its goroutines, but leaves the map stores
// open (calls still being served may write them; Close closes them).
func (e *Engine) Stop() {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.closed = true
	e.mu.Unlock()
	e.cancel()
	e.proto.Stop()
}
