package dmap

import (
	"context"
	"math"
	"sync/atomic"
	"time"

	"github.com/stowage/stowage/mapstore"
)

// Entry expiry: a time to live per entry (PutWithTTL, SetTTL) or per map
// (MapSpec.TTL, hazelcast.yaml time-to-live-seconds), and a maximum idle
// time per map (MapSpec.MaxIdle, max-idle-seconds).
//
// The deadline is absolute wall-clock time (Unix nanoseconds), decided by
// the partition's owner from its own clock when it applies the write
// (owner's now + TTL), and stored with the entry: it travels with the
// record to the sync and async backups (backup.Entry.X), into the map
// store (mapstore.Record.Expires) and back on load, EAGER or LAZY. The
// clock decides only whether an entry is dead; writes are still ordered by
// versions alone (invariant 3).
//
// Only the owner acts on a deadline. A read at the owner treats a dead
// entry as absent at once; the owner's expiry loop (Config.ExpiryInterval)
// then removes it with an ordinary versioned delete (opExpire: delete only
// if the entry is still at the version found dead), which is replicated
// to the backups and written to the map store like any delete, so memory
// and, after compaction, disk shrink. Backups keep the deadline and never
// remove an entry on their own clock. Clock skew between members
// therefore only moves the moment an entry dies: after a fail-over the
// new owner judges the deadlines by its clock, so an entry may die up to
// the skew earlier or later than on the old owner; an entry is never
// resurrected by skew, because the removal is a versioned write.
//
// An entry that expired while the cluster was down is loaded (the store
// has it) but is dead on load: reads, iteration and sizes skip it, and
// the expiry loop deletes it from the store.
//
// Max idle: the time of the last access (a write, or a read at the owner)
// is kept on the owner only, in memory, and not replicated, to keep
// reads free of replication. Backups stamp an entry when they apply its
// write; a member taking a partition over stamps every entry of it with
// the time of the take-over, and a load stamps with the load time. So a
// fail-over or a restart gives every entry a fresh idle period: an entry
// lives at least max-idle after its last access, and at most max-idle
// after the later of its last access and the last take-over or load.

// Operation kinds of expiry; numbered apart from the other kinds.
const (
	opSetTTL = 40 // change the deadline of a live entry, keeping its value
	opExpire = 41 // the owner's removal of an entry found dead at expVer
)

// expireBatch bounds the entries one partition gives to one round of
// the expiry loop, so that a mass expiry does not hold the loop on one
// partition.
const expireBatch = 1024

// defaultExpiryInterval is how often the owner looks for dead entries
// when Config.ExpiryInterval is 0.
const defaultExpiryInterval = time.Second

// ExpiredFunc is called on the owner after it removed an expired entry
// (the removal is durable and replicated): the hook for expiry events.
// It must not block; it runs on the expiry loop.
type ExpiredFunc func(mapName string, key, val []byte)

// nowNanos is the wall clock the expiry decisions use.
func nowNanos() int64 { return time.Now().UnixNano() }

// mapExpiry is the expiry policy of one map.
type mapExpiry struct {
	ttl     time.Duration // default time to live (0: none)
	maxIdle time.Duration // maximum idle time (0: none)
	// some is set once an entry with a deadline was held here, so the
	// expiry loop skips maps that never had one.
	some atomic.Bool
}

// active reports whether entries of this map may die.
func (x *mapExpiry) active() bool { return x.ttl > 0 || x.maxIdle > 0 || x.some.Load() }

// dead reports whether e is past its deadline or idle for too long at
// now.
func (c *heldMap) dead(e entry, now int64) bool {
	if e.exp != 0 && now >= e.exp {
		return true
	}
	return c.exp.maxIdle > 0 && e.access != 0 && now-e.access >= int64(c.exp.maxIdle)
}

// deadline is the absolute deadline a write by o at now gives its entry:
// the op's own TTL when it has one (0: none), else the map's.
func (c *heldMap) deadline(o *op, now int64) int64 {
	ttl := c.exp.ttl
	if o.ttlSet {
		ttl = o.ttl
	}
	if ttl <= 0 {
		return 0
	}
	if int64(ttl) > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + int64(ttl)
}

// stamp makes e as installed at now (the idle clock starts) and notes a
// deadline.
func (c *heldMap) stamp(e entry, now int64) entry {
	e.access = now
	if e.exp != 0 {
		c.exp.some.Store(true)
	}
	return e
}

// decideAt is the owner's decision on o for the key's entry prev (had:
// present in memory, dead or alive) at now: the decision, the deadline a
// written value gets, and the value and presence the operation reports.
// A dead entry is absent to every operation; opExpire reports the value
// it removes.
func (c *heldMap) decideAt(o *op, prev entry, had bool, now int64) (d Decision, exp int64, old []byte, live bool) {
	live = had && !c.dead(prev, now)
	if live {
		old = prev.val()
	}
	switch o.kind {
	case opExpire:
		return Decision{Write: had && !live && prev.ver == o.expVer, Delete: true}, 0, prev.val(), live
	case opSetTTL:
		if !live {
			return Decision{}, 0, nil, false
		}
		return Decision{Write: true, Value: prev.val()}, c.deadline(o, now), old, true
	}
	d = o.decide(old, prev.ver, live)
	if d.Write && !d.Delete {
		exp = c.deadline(o, now)
	}
	return d, exp, old, live
}

// readLive returns the entry of key k in p for a read at the owner: not
// found when dead, and with its access time moved to now when the map
// has a maximum idle time. p.mu held.
func (c *heldMap) readLive(p *fragment, k string, now int64) (entry, bool) {
	e, ok := p.entries[k]
	if !ok {
		return entry{}, false
	}
	if c.dead(e, now) {
		return entry{}, false
	}
	if c.exp.maxIdle > 0 {
		e.access = now
		p.entries[k] = e
	}
	return e, true
}

// touchAll restarts the idle clock of every entry of p (a take-over:
// the previous owner's access times are not replicated). p.mu held.
func (c *heldMap) touchAll(p *fragment, now int64) {
	if c.exp.maxIdle <= 0 {
		return
	}
	for k, e := range p.entries {
		e.access = now
		p.entries[k] = e
	}
}

// runExpiry is the owner's expiry loop: every interval it removes the
// dead entries of the partitions this member serves.
func (e *Engine) runExpiry() {
	every := e.cfg.ExpiryInterval
	if every <= 0 {
		every = defaultExpiryInterval
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
			e.ExpireNow(e.ctx)
		}
	}
}

// ExpireNow removes, at most expireBatch per partition, the dead entries
// of the partitions this member serves, each with a versioned delete
// that is replicated and written to the store; it returns how many it
// removed. The expiry loop calls it; tests may call it to not wait.
func (e *Engine) ExpireNow(ctx context.Context) int {
	n := 0
	for _, c := range e.heldMaps() {
		if !c.exp.active() {
			continue
		}
		for _, pt := range c.parts {
			if ctx.Err() != nil {
				return n
			}
			if _, _, serving := e.repl.Replica(pt.id).Serving(); !serving {
				continue
			}
			for _, d := range c.deadIn(pt, nowNanos()) {
				res, err := c.update(ctx, []byte(d.key), &op{kind: opExpire, expVer: d.ver})
				if err != nil {
					e.log.Debug("stowage: expiry: could not remove an entry now; the next round tries again",
						"map", c.name, "partition", pt.id, "err", err)
					continue
				}
				if res.wrote {
					n++
					if c.m != nil {
						c.m.expired.WithLabelValues(c.name).Inc()
					}
					if f := e.cfg.OnExpired; f != nil {
						f(c.name, []byte(d.key), res.old)
					}
				}
			}
		}
	}
	return n
}

type deadKey struct {
	key string
	ver mapstore.Version
}

// deadIn lists up to expireBatch dead entries of a ready partition.
func (c *heldMap) deadIn(p *fragment, now int64) []deadKey {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.ready {
		return nil
	}
	var out []deadKey
	for k, e := range p.entries {
		if c.dead(e, now) {
			out = append(out, deadKey{k, e.ver})
			if len(out) == expireBatch {
				break
			}
		}
	}
	return out
}
