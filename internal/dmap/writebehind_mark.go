package dmap

import (
	"context"
	"time"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/cluster"
	"github.com/stowage/stowage/mapstore"
)

// The stored watermark of write-behind: the per-key notices of what was
// stored (writebehind.go) can miss a backup, for instance one whose fill
// was taken before a batch was stored and installed after the notice came.
// So every wbMarkEvery each owner also sends its backups, per partition, a
// version W such that every write of the partition at or below W is
// stored or superseded by a later write the owner has pending: W is just
// below the oldest version the owner has pending or in flight. A backup
// drops the pending keys at or below W; a key whose latest write it
// applied is above W stays pending.

// wbMarkEvery is how often owners send the watermark.
const wbMarkEvery = time.Second

const mWBMark = "wbmark" // every write of these partitions up to W is stored

type wbMarkReq struct {
	Map   string   `msgpack:"m"`
	Marks []wbMark `msgpack:"k"`
}

type wbMark struct {
	P int        `msgpack:"p"`
	W backup.Ver `msgpack:"w"`
}

// storedMark returns partition p's watermark on its owner, and false
// when the partition is not ready here. p.mu held.
func (p *fragment) storedMark() (mapstore.Version, bool) {
	if !p.ready {
		return mapstore.Version{}, false
	}
	w := p.ver
	below := func(v mapstore.Version) {
		if v.Seq == 0 {
			w = mapstore.Version{}
			return
		}
		if b := (mapstore.Version{Epoch: v.Epoch, Seq: v.Seq - 1}); b.Less(w) {
			w = b
		}
	}
	for _, v := range p.pending {
		below(v)
	}
	for seq := range p.inflight {
		below(mapstore.Version{Epoch: p.ver.Epoch, Seq: seq})
	}
	return w, true
}

// dropStored drops the pending keys at or below w. p.mu held.
func (p *fragment) dropStored(w mapstore.Version) {
	for k, v := range p.pending {
		if !w.Less(v) {
			delete(p.pending, k)
		}
	}
}

// sendMarks sends every write-behind map's watermarks of the partitions
// this member owns to their backups, one call per map and backup.
func (e *Engine) sendMarks() {
	proto := e.proto
	if proto.Alone() {
		return
	}
	t, _ := proto.Table()
	if t == nil {
		return
	}
	self := proto.Self()
	for _, c := range e.heldMaps() {
		if c.wb == nil {
			continue
		}
		to := map[string][]wbMark{}
		for p, rs := range t.Owners {
			if len(rs) < 2 || rs[0] != self {
				continue
			}
			pt := c.parts[p]
			pt.mu.Lock()
			w, ok := pt.storedMark()
			pt.mu.Unlock()
			if !ok {
				continue
			}
			for _, b := range rs[1:] {
				to[b] = append(to[b], wbMark{P: p, W: backup.VerOf(w)})
			}
		}
		for id, marks := range to {
			proto.Go(func() {
				ctx, cancel := context.WithTimeout(proto.Context(), min(e.cfg.OpTimeout, wbNoticeTimeout))
				defer cancel()
				if _, err := proto.CallMember(ctx, id, mWBMark, wbMarkReq{Map: c.name, Marks: marks}); err != nil {
					e.log.Debug("stowage: write-behind watermark not delivered", "map", c.name, "member", id, "err", err)
				}
			})
		}
	}
}

// registerMarks makes the protocol serve the watermarks.
func (e *Engine) registerMarks() {
	e.proto.Register(mWBMark, cluster.CheckTable, func(_ context.Context, from string, body []byte) ([]byte, error) {
		var req wbMarkReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		if err := e.checkParts(markParts(req.Marks)); err != nil {
			return nil, err
		}
		c := e.held(req.Map)
		if c == nil {
			return nil, nil
		}
		sender := e.proto.IDOf(from)
		t, _ := e.proto.Table()
		for _, m := range req.Marks {
			// Only the partition's owner in this member's table.
			if t == nil || len(t.Owners[m.P]) == 0 || t.Owners[m.P][0] != sender {
				continue
			}
			pt := c.parts[m.P]
			pt.mu.Lock()
			pt.dropStored(m.W.Version())
			pt.mu.Unlock()
		}
		return nil, nil
	})
}

func markParts(ms []wbMark) []int {
	out := make([]int, len(ms))
	for i, m := range ms {
		out[i] = m.P
	}
	return out
}
