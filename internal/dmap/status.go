package dmap

import (
	"context"
	"slices"
	"time"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/mapstore"
)

// Table returns the version of this member's current partition table and
// each partition's replica set, owner first (0 and nil before the first
// table). The copy is the caller's.
func (e *Engine) Table() (version int64, owners [][]string) {
	t, _ := e.proto.Table()
	if t == nil {
		return 0, nil
	}
	owners = make([][]string, len(t.Owners))
	for p, rs := range t.Owners {
		owners[p] = slices.Clone(rs)
	}
	return t.Version, owners
}

// TableAway returns, per partition, the members whose replica slot the
// table holds for their return (nil when it holds none).
func (e *Engine) TableAway() [][]string {
	t, _ := e.proto.Table()
	if t == nil || len(t.Away) == 0 {
		return nil
	}
	away := make([][]string, len(t.Away))
	for p, a := range t.Away {
		away[p] = slices.Clone(a)
	}
	return away
}

// TableAwaySince returns since when each member whose slots the table
// holds has been gone, as the master that first saw it gone recorded it
// (nil when the table holds none, or does not say).
func (e *Engine) TableAwaySince() map[string]time.Time {
	t, _ := e.proto.Table()
	if t == nil || len(t.Departed) == 0 {
		return nil
	}
	out := make(map[string]time.Time, len(t.Departed))
	for id, d := range t.Departed {
		if d.Since > 0 {
			out[id] = time.Unix(0, d.Since).UTC()
		}
	}
	return out
}

// TakeOvers returns the last take-overs of this member, oldest first.
func (e *Engine) TakeOvers() []backup.TakeOver { return e.repl.TakeOvers() }

// DiskUsage says what the named map's store keeps on storage; held is
// false when the map is not held here, known false when it is held but
// its store cannot say (memory only, or a store without
// mapstore.DiskUser).
func (e *Engine) DiskUsage(ctx context.Context, name string) (du mapstore.DiskUsage, held, known bool, err error) {
	c := e.held(name)
	if c == nil {
		return du, false, false, nil
	}
	u, ok := c.store.(mapstore.DiskUser)
	if !ok {
		return du, true, false, nil
	}
	du, err = u.DiskUsage(ctx)
	return du, true, err == nil, err
}
