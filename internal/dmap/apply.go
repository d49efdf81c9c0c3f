package dmap

import (
	"fmt"

	"github.com/stowage/stowage/backup"
	"github.com/stowage/stowage/partition"
)

// applyBackup applies a record (or its revert) the owner sent to this
// backup's copy of partition p. It is refused with NeedFill when the map
// was not filled here.
func (c *heldMap) applyBackup(p *fragment, req *backup.Record, revert bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.filled {
		return &partition.RefusedError{NeedFill: true, Msg: fmt.Sprintf("map %q partition %d was not filled here", req.Map, req.P)}
	}
	k := string(req.Rec.K)
	rv := req.Rec.R.Version()
	if revert {
		if cur, ok := p.entries[k]; ok && cur.ver == rv || !ok && req.Rec.D {
			if req.PrevOK {
				p.entries[k] = c.stamp(entry{data: valData(req.Prev.V), ver: req.Prev.R.Version(), exp: req.Prev.X}, nowNanos())
			} else {
				delete(p.entries, k)
			}
		}
		p.markApplied(rv.Seq, nil)
		if req.Comp != 0 {
			p.markApplied(req.Comp, nil)
			if p.ver.Seq < req.Comp {
				p.ver.Seq = req.Comp
			}
		}
		return nil
	}
	if cur, ok := p.entries[k]; !ok || cur.ver.Less(rv) {
		if req.Rec.D {
			delete(p.entries, k)
		} else {
			p.entries[k] = c.stamp(entry{data: valData(req.Rec.V), ver: rv, exp: req.Rec.X}, nowNanos())
		}
	}
	if p.ver.Less(rv) {
		p.ver = rv
	}
	if c.wb != nil {
		p.pend(k, rv)
	}
	p.markApplied(rv.Seq, req.Rec.K)
	return nil
}

// markApplied records that seq was applied on this backup. p.mu held.
func (p *fragment) markApplied(seq uint64, key []byte) {
	if seq <= p.applied {
		return
	}
	if seq != p.applied+1 {
		if p.above == nil {
			p.above = map[uint64][]byte{}
		}
		p.above[seq] = key
		return
	}
	p.applied = seq
	for {
		if _, ok := p.above[p.applied+1]; !ok {
			break
		}
		delete(p.above, p.applied+1)
		p.applied++
	}
}
