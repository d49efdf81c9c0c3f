package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stowage/stowage/partition"
)

// The partition table on this member: installed one version at a time,
// computed and published by the master (the oldest live member), fetched
// from any member that shows a newer one.

// Table returns the installed table (nil before the first) and the
// channel closed when it changes.
func (d *Protocol) Table() (*partition.Table, <-chan struct{}) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.table, d.tabCh
}

func (d *Protocol) TableVersion() int64 {
	t, _ := d.Table()
	if t == nil {
		return 0
	}
	return t.Version
}

// ownerOf returns the owner of partition p per the current table, waiting
// (within ctx) for a first table.
func (d *Protocol) OwnerOf(ctx context.Context, p int) (string, error) {
	for {
		t, ch := d.Table()
		if t != nil {
			if o := t.Owner(p); o != "" {
				return o, nil
			}
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return "", fmt.Errorf("stowage: no partition table yet (waiting for %d members): %w", d.startMin, ctx.Err())
		case <-d.ctx.Done():
			return "", d.closed
		}
	}
}

// install makes t the current table if it is newer, and hands it to the
// layer above (onTable).
func (d *Protocol) install(t *partition.Table) bool {
	if t == nil || len(t.Owners) != d.count {
		return false
	}
	// Tables are installed one at a time, so that the layer above never
	// moves back to an older table's view.
	d.instMu.Lock()
	defer d.instMu.Unlock()
	d.mu.Lock()
	if d.table != nil && t.Version <= d.table.Version {
		d.mu.Unlock()
		return false
	}
	d.table = t
	close(d.tabCh)
	d.tabCh = make(chan struct{})
	d.mu.Unlock()
	d.log.Debug("stowage: partition table installed", "version", t.Version)
	if d.onTable != nil {
		d.onTable(t)
	}
	return true
}

// masterLoop recomputes and publishes the table whenever membership
// changes, while this member is the master, and republishes it now and
// then for members that missed it.
func (d *Protocol) masterLoop() {
	defer d.wg.Done()
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	for {
		ch := d.view.Changed()
		d.recheckDown()
		ms := d.Members()
		d.rebalance(ms)
		if d.repair != nil {
			d.repair()
		}
		select {
		case <-d.ctx.Done():
			return
		case <-ch:
		case <-d.kick:
		case <-tick.C:
		}
	}
}

// rebalance is the master's work: a table for the live members, published
// to every one of them.
func (d *Protocol) rebalance(ms []Member) {
	if len(ms) == 0 || ms[0].ID != d.self {
		d.mu.Lock()
		d.wasMstr = false
		d.mu.Unlock()
		return
	}
	cur, _ := d.Table()
	if cur == nil && len(ms) < d.startMin {
		return // hazelcast.initial.min.size
	}
	key := memberKey(ms)
	d.mu.Lock()
	changed := !d.wasMstr || key != d.lastMembers
	d.wasMstr, d.lastMembers = true, key
	d.mu.Unlock()
	if changed && d.tr != nil {
		// A new master, or members that were apart (a healed split):
		// continue from the newest table any member has, so that the next
		// version is above every table in use.
		for _, t := range d.collectTables(ms) {
			d.install(t)
		}
		cur, _ = d.Table()
	}
	ids := make([]string, 0, len(ms))
	for _, m := range ms {
		if !m.Draining {
			ids = append(ids, m.ID)
		}
	}
	if len(ids) == 0 {
		return // every member is leaving: keep the table
	}
	next := partition.Assign(ids, d.count, d.replicas-1, cur)
	if cur != nil && slices.EqualFunc(next.Owners, cur.Owners, slices.Equal) {
		d.publish(ms, cur)
		return
	}
	d.install(next)
	level := slog.LevelInfo
	if d.tr == nil {
		level = slog.LevelDebug
	}
	d.log.Log(d.ctx, level, "stowage: partition table published", "version", next.Version, "members", len(ms))
	d.publish(ms, next)
}

func memberKey(ms []Member) string {
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return strings.Join(ids, ",")
}

func (d *Protocol) collectTables(ms []Member) []*partition.Table {
	var out []*partition.Table
	for _, m := range ms {
		if m.ID == d.self || m.RPC == "" {
			continue
		}
		ctx, cancel := context.WithTimeout(d.ctx, 2*time.Second)
		b, err := d.Call(ctx, m.RPC, mGetTab, nil)
		cancel()
		if err != nil {
			continue
		}
		var tm tableMsg
		if Decode(b, &tm) == nil && tm.Version > 0 {
			out = append(out, tm.table())
		}
	}
	return out
}

func (d *Protocol) publish(ms []Member, t *partition.Table) {
	if d.tr == nil {
		return
	}
	body := Encode(tableOf(t))
	var wg sync.WaitGroup
	for _, m := range ms {
		if m.ID == d.self || m.RPC == "" {
			continue
		}
		wg.Add(1)
		go func(addr string) {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(d.ctx, 2*time.Second)
			defer cancel()
			b, err := d.Call(ctx, addr, mTable, body)
			var tm tableMsg
			if err == nil && Decode(b, &tm) == nil && tm.Version > t.Version {
				// The member has a newer table (from a master this one did
				// not know of): continue from it.
				d.AskFetch(addr)
				d.kickLoop()
			}
		}(m.RPC)
	}
	wg.Wait()
}

// noteTable is called with the table version a caller sent: a newer one
// is fetched from it before the call is served.
func (d *Protocol) NoteTable(ctx context.Context, from string, tv int64) {
	if tv <= d.TableVersion() || d.tr == nil {
		return
	}
	b, err := d.Call(ctx, from, mGetTab, nil)
	if err != nil {
		return
	}
	var tm tableMsg
	if Decode(b, &tm) == nil {
		d.install(tm.table())
	}
}

// fetchLoop fetches tables that answers showed to be newer.
func (d *Protocol) fetchLoop() {
	defer d.wg.Done()
	for {
		select {
		case <-d.ctx.Done():
			return
		case addr := <-d.fetch:
			ctx, cancel := context.WithTimeout(d.ctx, 2*time.Second)
			d.NoteTable(ctx, addr, d.TableVersion()+1)
			cancel()
		}
	}
}

// askFetch queues a table fetch from addr.
func (d *Protocol) AskFetch(addr string) {
	select {
	case d.fetch <- addr:
	default:
	}
}
