package dmap

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/stowage/stowage/cluster"
)

// Cluster-wide listeners across members.
//
// Subscriptions: a member with cluster-wide listeners announces, to every
// other member of its view, the maps it listens to (mListen: the whole
// set each time, so a removal is the next announcement without the map).
// It does so when a listener is added or removed, and every announce
// interval; a subscription not announced again within three intervals
// ends (its member died or stopped). The subscriber is the caller the
// transport proved (with TLS, the dispatcher serves members only), never
// a name in the message.
//
// Delivery: the owner keeps one outbox per subscribed member (bounded by
// outboxCap) and one goroutine per non-empty outbox that sends its events
// in order, up to eventBatch per call, one call at a time (mEvents). An
// event that does not fit, or whose call failed, is dropped and counted
// per map; the count travels with the next call to that member, whose
// listeners of the map get an EventLost.
//
// Order across owners: one owner's events of a partition reach a member
// in the order the owner applied them. When the partition moves, the new
// owner's events carry a higher epoch; the receiver keeps the highest
// epoch it delivered per map and partition and drops (and counts, as
// "stale") an event of an older epoch that arrives after it, so the
// events of one key are never delivered out of order.

const (
	mListen = "listen" // the maps the caller has cluster-wide listeners of
	mEvents = "events" // events of the callee's subscriptions

	// outboxCap bounds the events an owner keeps for one member.
	outboxCap = 10000
	// eventBatch bounds the events of one call.
	eventBatch = 512
	// defaultAnnounce is how often subscriptions are announced when
	// Config.ListenerAnnounce is 0.
	defaultAnnounce = time.Second
)

type listenMap struct {
	Map string `msgpack:"m"`
	Val bool   `msgpack:"v,omitempty"` // values wanted
}

type listenReq struct {
	Maps []listenMap `msgpack:"s"`
	TTL  int64       `msgpack:"t"` // nanoseconds the subscriptions hold unless announced again
}

type wireEvent struct {
	Map   string    `msgpack:"m"`
	Kind  EventKind `msgpack:"k"`
	Key   []byte    `msgpack:"y"`
	Val   []byte    `msgpack:"v,omitempty"`
	Old   []byte    `msgpack:"o,omitempty"`
	Part  int       `msgpack:"p"`
	Epoch uint64    `msgpack:"e"`
}

type lostCount struct {
	Map string `msgpack:"m"`
	N   int64  `msgpack:"n"`
}

type eventsReq struct {
	Events []wireEvent `msgpack:"e"`
	Lost   []lostCount `msgpack:"l,omitempty"`
}

// remoteSub is another member's subscription to one map's events.
type remoteSub struct {
	member, mapN string
	vals         bool
	expires      int64 // Unix nanoseconds; guarded by listeners.mu
}

// outbox holds one member's events until they are sent.
type outbox struct {
	to      string
	mu      sync.Mutex
	q       []wireEvent
	lost    map[string]int64
	running bool
}

// sendEvent queues ev for the member of subscription s.
func (e *Engine) sendEvent(s *remoteSub, ev Event) {
	w := wireEvent{Map: ev.Map, Kind: ev.Kind, Key: ev.Key, Part: ev.Part, Epoch: ev.Epoch}
	if s.vals {
		w.Val, w.Old = ev.Val, ev.Old
	}
	v, _ := e.lis.out.LoadOrStore(s.member, &outbox{to: s.member})
	o := v.(*outbox)
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.q) >= outboxCap {
		o.addLost(ev.Map, 1)
		e.m.listenerDropped.WithLabelValues(ev.Map, "outbox").Inc()
		return
	}
	o.q = append(o.q, w)
	if !o.running && e.proto.Go(func() { e.drainOutbox(o) }) {
		o.running = true
	}
}

// addLost counts dropped events of a map. o.mu held.
func (o *outbox) addLost(name string, n int64) {
	if o.lost == nil {
		o.lost = map[string]int64{}
	}
	o.lost[name] += n
}

// drainOutbox sends o's events, a batch per call, until it is empty. A
// failed call drops what is queued (counted, and told with the next
// call) and ends the goroutine; the next event starts another.
func (e *Engine) drainOutbox(o *outbox) {
	for {
		o.mu.Lock()
		if len(o.q) == 0 {
			o.running = false
			o.mu.Unlock()
			return
		}
		n := min(len(o.q), eventBatch)
		req := eventsReq{Events: o.q[:n:n]}
		if n == len(o.q) {
			o.q = nil
		} else {
			o.q = append([]wireEvent(nil), o.q[n:]...)
		}
		for name, k := range o.lost {
			req.Lost = append(req.Lost, lostCount{Map: name, N: k})
		}
		o.lost = nil
		o.mu.Unlock()

		ctx, cancel := context.WithTimeout(e.proto.Context(), e.cfg.OpTimeout)
		_, err := e.proto.CallMember(ctx, o.to, mEvents, req)
		cancel()
		if err == nil {
			continue
		}
		e.log.Debug("stowage: entry events to a member were dropped", "member", o.to, "err", err)
		o.mu.Lock()
		for _, l := range req.Lost {
			o.addLost(l.Map, l.N)
		}
		drop := append(req.Events, o.q...)
		o.q = nil
		for _, w := range drop {
			o.addLost(w.Map, 1)
			e.m.listenerDropped.WithLabelValues(w.Map, "send").Inc()
		}
		o.running = false
		o.mu.Unlock()
		return
	}
}

// announceEvery is the announce interval.
func (e *Engine) announceEvery() time.Duration {
	if e.cfg.ListenerAnnounce > 0 {
		return e.cfg.ListenerAnnounce
	}
	return defaultAnnounce
}

// wanted is this member's cluster-wide subscriptions.
func (e *Engine) wanted() []listenMap {
	ls := &e.lis
	ls.mu.Lock()
	defer ls.mu.Unlock()
	vals := map[string]bool{}
	for _, l := range ls.byID {
		if !l.opts.Local {
			vals[l.mapN] = vals[l.mapN] || l.opts.IncludeValue
		}
	}
	out := make([]listenMap, 0, len(vals))
	for name, v := range vals {
		out = append(out, listenMap{Map: name, Val: v})
	}
	return out
}

// announceAll tells every other member of the view this member's
// subscriptions, in parallel, and waits for their answers (at most the
// announce interval each). An unreachable member hears of them at a
// later round.
func (e *Engine) announceAll(ctx context.Context) {
	subs := e.wanted()
	e.lis.mu.Lock()
	if len(subs) == 0 && !e.lis.announced {
		e.lis.mu.Unlock()
		return
	}
	e.lis.announced = len(subs) > 0
	e.lis.mu.Unlock()
	req := cluster.Encode(listenReq{Maps: subs, TTL: int64(3 * e.announceEvery())})
	ctx, cancel := context.WithTimeout(ctx, max(e.announceEvery(), time.Second))
	defer cancel()
	var wg sync.WaitGroup
	for _, m := range e.proto.View().Members() {
		if m.ID == e.proto.Self() || m.RPC == "" {
			continue
		}
		wg.Go(func() {
			if _, err := e.proto.Call(ctx, m.RPC, mListen, req); err != nil {
				e.log.Debug("stowage: announcing entry listeners failed; the next round tries again", "member", m.ID, "err", err)
			}
		})
	}
	wg.Wait()
}

// runAnnounce announces this member's subscriptions every interval and
// ends the other members' subscriptions that were not announced again.
func (e *Engine) runAnnounce() {
	t := time.NewTicker(e.announceEvery())
	defer t.Stop()
	for {
		select {
		case <-e.ctx.Done():
			return
		case <-t.C:
			e.announceAll(e.ctx)
			e.sweepSubs(time.Now().UnixNano())
		}
	}
}

// sweepSubs ends the subscriptions whose time ran out.
func (e *Engine) sweepSubs(now int64) {
	ls := &e.lis
	ls.mu.Lock()
	defer ls.mu.Unlock()
	changed := false
	for member, bymap := range ls.subs {
		for name, s := range bymap {
			if s.expires <= now {
				delete(bymap, name)
				changed = true
			}
		}
		if len(bymap) == 0 {
			delete(ls.subs, member)
		}
	}
	if changed {
		ls.rebuild()
	}
}

// memberAt is the id of the member whose transport address is from ("":
// none in the view).
func (e *Engine) memberAt(from string) string {
	if id := e.proto.IDOf(from); id != "" {
		return id
	}
	for _, m := range e.proto.View().Members() {
		if m.RPC == from {
			return m.ID
		}
	}
	return ""
}

// onListen installs the caller's subscriptions, replacing its previous
// ones.
func (e *Engine) onListen(from string, req *listenReq) error {
	id := e.memberAt(from)
	if id == "" {
		return fmt.Errorf("stowage: entry listeners announced by %s, which is not a member", from)
	}
	for _, s := range req.Maps {
		if err := ValidMapName(s.Map); err != nil {
			return err
		}
	}
	ttl := min(max(time.Duration(req.TTL), time.Second), 5*time.Minute)
	expires := time.Now().Add(ttl).UnixNano()
	ls := &e.lis
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if ls.subs == nil {
		ls.subs = map[string]map[string]*remoteSub{}
	}
	old := ls.subs[id]
	next := make(map[string]*remoteSub, len(req.Maps))
	changed := len(old) != len(req.Maps)
	for _, s := range req.Maps {
		cur := old[s.Map]
		if cur == nil || cur.vals != s.Val {
			cur = &remoteSub{member: id, mapN: s.Map, vals: s.Val}
			changed = true
		}
		cur.expires = expires
		next[s.Map] = cur
	}
	if len(next) == 0 {
		delete(ls.subs, id)
	} else {
		ls.subs[id] = next
	}
	if changed {
		ls.rebuild()
	}
	return nil
}

// onEvents hands another member's events to this member's cluster-wide
// listeners.
func (e *Engine) onEvents(from string, req *eventsReq) error {
	if len(req.Events) > 2*eventBatch || len(req.Lost) > 2*eventBatch {
		return fmt.Errorf("stowage: %d entry events in one call, over %d", len(req.Events), 2*eventBatch)
	}
	id := e.memberAt(from)
	for _, l := range req.Lost {
		if ml := e.lis.of(l.Map); ml != nil && l.N > 0 {
			for _, x := range ml.local {
				if !x.opts.Local {
					x.noteLost(l.N)
				}
			}
		}
	}
	for _, w := range req.Events {
		if w.Kind < EventAdded || w.Kind > EventExpired {
			return fmt.Errorf("stowage: entry event of kind %d", w.Kind)
		}
		ml := e.lis.of(w.Map)
		if ml == nil || len(ml.local) == 0 {
			continue
		}
		if !e.lis.fresh(w.Map, w.Part, w.Epoch) {
			e.m.listenerDropped.WithLabelValues(w.Map, "stale").Inc()
			continue
		}
		ev := Event{Kind: w.Kind, Map: w.Map, Key: w.Key, Val: w.Val, Old: w.Old, Member: id, Part: w.Part, Epoch: w.Epoch}
		for _, x := range ml.local {
			if !x.opts.Local {
				x.offer(ev, e.m)
			}
		}
	}
	return nil
}

// registerEvents makes the protocol serve the listeners' methods.
func (e *Engine) registerEvents() {
	e.proto.Register(mListen, 0, func(_ context.Context, from string, body []byte) ([]byte, error) {
		var req listenReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return nil, e.onListen(from, &req)
	})
	e.proto.Register(mEvents, 0, func(_ context.Context, from string, body []byte) ([]byte, error) {
		var req eventsReq
		if err := cluster.Decode(body, &req); err != nil {
			return nil, err
		}
		return nil, e.onEvents(from, &req)
	})
}
