package dmap

import (
	"context"
	"errors"
	"slices"
	"sort"
	"time"
)

// heldMaps returns every map this member holds.
func (n *Engine) heldMaps() []*heldMap {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*heldMap, 0, len(n.maps))
	for _, c := range n.maps {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Drain waits until a table without this member is installed and no
// partition is held here any more (the caller told membership this
// member is leaving).
func (n *Engine) Drain(ctx context.Context) error {
	if len(n.proto.View().Members()) <= 1 {
		return nil
	}
	for {
		t, ch := n.proto.Table()
		busy := t == nil
		if t != nil {
			for p, rs := range t.Owners {
				if slices.Contains(rs, n.proto.Self()) {
					busy = true
					break
				}
				if n.repl.Replica(p).Busy() {
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
func (n *Engine) Close() error {
	n.Stop()
	n.mu.Lock()
	cores := n.maps
	n.maps = nil
	n.mu.Unlock()
	var errs []error
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
func (n *Engine) Stop() {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return
	}
	n.closed = true
	n.mu.Unlock()
	n.cancel()
	n.proto.Stop()
}
