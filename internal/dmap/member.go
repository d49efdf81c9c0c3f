package dmap

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/stowage/stowage/mapstore"
)

// allCores returns every map this member holds.
func (n *Engine) allCores() []*core {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*core, 0, len(n.maps))
	for _, c := range n.maps {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// partData collects partition p of every map: those ready (owner) or
// filled (backup) here.
func (n *Engine) partData(p int, owner bool, cores []*core) partData {
	return n.partDataFor(p, owner, cores, 0)
}

// partDataFor is partData for the backup at place pos (1-based) in p's
// replica set: only the maps that keep that many backups (0: all).
func (n *Engine) partDataFor(p int, owner bool, cores []*core, pos int) partData {
	pd := partData{P: p}
	for _, c := range cores {
		if pos > 0 && pos > c.sync+c.async {
			continue
		}
		pt := c.parts[p]
		pt.mu.Lock()
		ok := pt.ready || pt.loaded
		if !owner {
			ok = pt.filled
		}
		pt.mu.Unlock()
		if ok {
			pd.Maps = append(pd.Maps, c.export(pt, owner))
		}
	}
	return pd
}

// seqSum is the sum of partition p's last seqs over the maps: a measure
// of how far a holder's copy got, to choose between equal epochs.
func (n *Engine) seqSum(p int) uint64 {
	var s uint64
	for _, c := range n.allCores() {
		pt := c.parts[p]
		pt.mu.Lock()
		s += pt.ver.Seq
		pt.mu.Unlock()
	}
	return s
}

// dropPartition forgets what this member holds of partition p.
func (n *Engine) dropPartition(p int) {
	for _, c := range n.allCores() {
		c.clearPart(c.parts[p])
	}
}

// releaseStores tells the map stores this member no longer owns p.
func (n *Engine) releaseStores(p int) {
	for _, c := range n.allCores() {
		if o, ok := c.store.(mapstore.PartitionOwner); ok {
			o.Release(p)
		}
	}
}

// parallel runs fn(0..n-1) on LoadWorkers goroutines.
func (n *Engine) parallel(count int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(n.cfg.LoadWorkers, count); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				fn(i)
			}
		}()
	}
	for i := 0; i < count; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Drain waits until a table without this member is installed and no
// partition is held here any more (the caller told membership this
// member is leaving).
func (n *Engine) Drain(ctx context.Context) error {
	if len(n.d.view.Members()) <= 1 {
		return nil
	}
	for {
		t, ch := n.d.currentTable()
		busy := t == nil
		if t != nil {
			for p, rs := range t.Owners {
				if slices.Contains(rs, n.d.self) {
					busy = true
					break
				}
				if n.d.slots[p].Busy() {
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
	n.d.stop()
}
