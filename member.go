package stowage

import (
	"context"
	"errors"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
)

// allCores returns every map this member holds.
func (n *Node) allCores() []*core {
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
func (n *Node) partData(p int, owner bool, cores []*core) partData {
	return n.partDataFor(p, owner, cores, 0)
}

// partDataFor is partData for the backup at place pos (1-based) in p's
// replica set: only the maps that keep that many backups (0: all).
func (n *Node) partDataFor(p int, owner bool, cores []*core, pos int) partData {
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
func (n *Node) seqSum(p int) uint64 {
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
func (n *Node) dropPartition(p int) {
	for _, c := range n.allCores() {
		c.clearPart(c.parts[p])
	}
}

// releaseStores tells the map stores this member no longer owns p.
func (n *Node) releaseStores(p int) {
	for _, c := range n.allCores() {
		if o, ok := c.store.(mapstore.PartitionOwner); ok {
			o.Release(p)
		}
	}
}

// parallel runs fn(0..n-1) on LoadWorkers goroutines.
func (n *Node) parallel(count int, fn func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < min(n.opts.LoadWorkers, count); w++ {
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

// Leave hands this member's partitions over to the others, then stops
// it like Close. Without other members it is Close.
func (n *Node) Leave(ctx context.Context) error {
	if n.clu != nil && len(n.d.view.Members()) > 1 {
		if err := n.drain(ctx); err != nil {
			n.log.Warn("stowage: leaving before every partition was handed over", "err", err)
		}
		if err := n.clu.Leave(ctx); err != nil && !errors.Is(err, cluster.ErrClosed) {
			n.log.Warn("stowage: leave", "err", err)
		}
	}
	return n.Close()
}

// drain waits until a table without this member is installed and no
// partition is held here any more.
func (n *Node) drain(ctx context.Context) error {
	n.clu.SetDraining()
	for {
		t, ch := n.d.currentTable()
		busy := t == nil
		if t != nil {
			for p, rs := range t.Owners {
				if slices.Contains(rs, n.d.self) {
					busy = true
					break
				}
				s := n.d.slots[p]
				s.mu.Lock()
				if s.st == stHeld && s.handedTo == "" || s.st == stActive {
					busy = true
				}
				s.mu.Unlock()
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

// Close stops the node without handing partitions over (the others take
// them as from a failed member): it stops loading and the cluster work,
// flushes and closes every map store, leaves membership, and returns once
// every goroutine the node started has stopped.
func (n *Node) Close() error {
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	n.mu.Unlock()
	n.cancel()
	var errs []error
	if n.clu != nil {
		errs = append(errs, n.clu.Close())
	}
	if n.d != nil {
		n.d.stop()
	}
	if n.ownT && n.tr != nil {
		errs = append(errs, n.tr.Close())
	}
	n.wg.Wait()
	for _, c := range n.maps {
		if c.store != nil {
			errs = append(errs, c.store.Close())
		}
	}
	for _, f := range n.bolts {
		errs = append(errs, f.Close())
	}
	return errors.Join(errs...)
}
