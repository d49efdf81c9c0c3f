package backup

import (
	"slices"
	"sync"
	"time"
)

// TakeOver is one batch of partitions this member took ownership of
// together, from one source: a fail-over (promotion of a backup's copy,
// or the map stores when no copy was left), a migration (hand-over by the
// previous owner), or a fresh start (the map stores).
type TakeOver struct {
	At           time.Time `json:"at"`
	Source       string    `json:"source"`         // handover, promotion or store
	From         string    `json:"from,omitempty"` // the member whose copy was taken ("" for store)
	Partitions   int       `json:"partitions"`
	TableVersion int64     `json:"partition_table_version"`
}

// takeOverRing keeps the last takeOverKeep take-overs, oldest first.
type takeOverRing struct {
	mu  sync.Mutex
	buf []TakeOver
}

const takeOverKeep = 32

func (r *takeOverRing) add(t TakeOver) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) == takeOverKeep {
		copy(r.buf, r.buf[1:])
		r.buf = r.buf[:takeOverKeep-1]
	}
	r.buf = append(r.buf, t)
}

func (r *takeOverRing) list() []TakeOver {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.buf)
}

// TakeOvers returns the last take-overs of this member (at most 32,
// oldest first); partitions activated in one batch from one source and
// member are one entry.
func (r *Replicator) TakeOvers() []TakeOver { return r.takeOvers.list() }

// recordTakeOvers adds one entry per source and member of the partitions
// activated together.
func (r *Replicator) recordTakeOvers(activated []source, tv int64, now time.Time) {
	if len(activated) == 0 {
		return
	}
	type key struct{ src, from string }
	counts := map[key]int{}
	var order []key
	for _, s := range activated {
		k := key{sourceLabel(s), s.member}
		if s.store {
			k.from = ""
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	for _, k := range order {
		r.takeOvers.add(TakeOver{At: now, Source: k.src, From: k.from, Partitions: counts[k], TableVersion: tv})
	}
}
