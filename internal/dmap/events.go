package dmap

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// Entry listeners (Hazelcast's EntryListener): a function told of every
// entry added, updated, removed or expired in one map, or of one key.
//
// Where events are raised: on the partition's owner, in update (owner.go),
// once a write is durable, replicated and applied to memory, under the
// partition's lock. Writes of one key are applied one at a time, so the
// events of one key are raised in the order the writes were applied.
// Backups raise nothing; a write that failed raises nothing.
//
// Who hears them: every listener of the map on the owner (a local
// listener hears only these: the entries this member owns), and, for
// each other member with a cluster-wide listener of the map, the owner's
// outbox to that member (events_remote.go), which sends them in order,
// in batches, one call at a time.
//
// A slow listener does not hold up writes: raising an event is a
// non-blocking offer to each listener's own bounded queue
// (ListenerOptions.QueueSize) and to each outbox (outboxCap). An event
// that does not fit is dropped and counted
// (stowage_listener_events_dropped_total); the listener is then told how
// many it missed by an EventLost before its next event. One goroutine per
// listener calls its function, one event at a time.

// EventKind says what happened to an entry.
type EventKind uint8

// Kinds of events. There is no eviction by size in stowage, so the
// EVICTED events of Hazelcast never happen; an entry whose time to live
// or max idle time ran out is EventExpired.
const (
	EventAdded   EventKind = iota + 1 // a key with no (live) value got one
	EventUpdated                      // a live value was replaced
	EventRemoved                      // a live value was deleted
	EventExpired                      // the owner removed an entry whose time ran out
	// EventLost carries no entry: Lost events meant for this listener
	// were dropped (its queue or the owner's outbox was full, or a call
	// carrying them failed) before the next one it gets.
	EventLost
)

func (k EventKind) String() string {
	switch k {
	case EventAdded:
		return "ADDED"
	case EventUpdated:
		return "UPDATED"
	case EventRemoved:
		return "REMOVED"
	case EventExpired:
		return "EXPIRED"
	case EventLost:
		return "LOST"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one change of an entry, as the partition's owner applied it.
// Its byte slices are shared with the map and other listeners: they must
// not be modified.
type Event struct {
	Kind EventKind
	Map  string
	Key  []byte
	// Val is the new value (added, updated) and Old the value before
	// (updated, removed, expired); both nil unless the listener asked
	// for values.
	Val, Old []byte
	// Member is the id of the member that applied the write (the
	// partition's owner then).
	Member string
	// Part and Epoch are the entry's partition and the owner's epoch of
	// it when the write was applied.
	Part  int
	Epoch uint64
	// Lost is, for EventLost, how many events were dropped.
	Lost int64
}

// ListenerOptions choose what a listener hears.
type ListenerOptions struct {
	// Key, when not nil, limits the listener to that key (encoded).
	Key []byte
	// IncludeValue makes events carry the new and old values.
	IncludeValue bool
	// Local limits the listener to the entries this member owns
	// (Hazelcast's addLocalEntryListener); otherwise it hears the whole
	// cluster's.
	Local bool
	// QueueSize bounds the events waiting for the listener (default
	// DefaultListenerQueue); past it events are dropped and counted.
	QueueSize int
}

// DefaultListenerQueue is a listener's queue when ListenerOptions.QueueSize
// is 0.
const DefaultListenerQueue = 10000

// ErrNoListener is returned when removing a listener that is not
// registered (any more).
var ErrNoListener = errors.New("stowage: no such entry listener")

// listener is one registered listener on this member.
type listener struct {
	id   string
	mapN string
	opts ListenerOptions
	fn   func(Event)
	ch   chan Event
	stop chan struct{} // closed by RemoveListener

	mu   sync.Mutex // orders offers, so that one key's events queue in order
	lost int64      // dropped since the last event queued
	done bool
}

// offer queues ev for the listener without waiting; a full queue drops
// it and counts it. A pending count of dropped events goes first.
func (l *listener) offer(ev Event, m *metrics) {
	if l.opts.Key != nil && !bytes.Equal(l.opts.Key, ev.Key) {
		return
	}
	if !l.opts.IncludeValue {
		ev.Val, ev.Old = nil, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	if l.lost > 0 {
		select {
		case l.ch <- Event{Kind: EventLost, Map: l.mapN, Lost: l.lost}:
			l.lost = 0
		default:
			l.lost++
			m.listenerDropped.WithLabelValues(l.mapN, "queue").Inc()
			return
		}
	}
	select {
	case l.ch <- ev:
	default:
		l.lost++
		m.listenerDropped.WithLabelValues(l.mapN, "queue").Inc()
	}
}

// noteLost tells the listener that n events meant for it were dropped
// before it got them (at the owner's outbox or on the way; for a
// listener of one key, the count may include events of other keys).
func (l *listener) noteLost(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	l.lost += n
	select {
	case l.ch <- Event{Kind: EventLost, Map: l.mapN, Lost: l.lost}:
		l.lost = 0
	default: // told once the queue has room
	}
}

// takeLost returns and clears the count of dropped events when no event
// is queued.
func (l *listener) takeLost() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.ch) > 0 || l.done {
		return 0
	}
	n := l.lost
	l.lost = 0
	return n
}

// run calls the listener's function with each queued event until the
// listener is removed or the engine stops.
func (l *listener) run(e *Engine) {
	stopped := e.proto.Context().Done()
	for {
		select {
		case ev := <-l.ch:
			// A removal wins over events still queued.
			select {
			case <-l.stop:
				return
			default:
			}
			l.fn(ev)
			e.m.listenerEvents.WithLabelValues(l.mapN).Inc()
			// Dropped events are told as soon as the queue ran dry,
			// not only before the next event that fits.
			if n := l.takeLost(); n > 0 {
				l.fn(Event{Kind: EventLost, Map: l.mapN, Lost: n})
			}
		case <-l.stop:
			return
		case <-stopped:
			return
		}
	}
}

// mapListeners are what listens to one map: listeners on this member
// and the other members with cluster-wide listeners of it.
type mapListeners struct {
	local  []*listener
	remote []*remoteSub
}

// listeners is the engine's registry. Its table is copied on every
// change and read without a lock by the write path.
type listeners struct {
	mu    sync.Mutex
	byID  map[string]*listener
	subs  map[string]map[string]*remoteSub // member -> map -> subscription
	seq   atomic.Uint64
	table atomic.Pointer[map[string]*mapListeners]
	// announced: the last announcement named some map (the next one
	// must go out even if it names none).
	announced bool

	emu    sync.Mutex
	epochs map[epochKey]uint64 // highest epoch delivered per map and partition

	out sync.Map // member id -> *outbox (events_remote.go)
}

type epochKey struct {
	m string
	p int
}

// fresh reports whether an event of partition p of map name at epoch is
// not older than one already delivered here, and notes its epoch.
func (ls *listeners) fresh(name string, p int, epoch uint64) bool {
	ls.emu.Lock()
	defer ls.emu.Unlock()
	k := epochKey{name, p}
	if epoch < ls.epochs[k] {
		return false
	}
	if ls.epochs == nil {
		ls.epochs = map[epochKey]uint64{}
	}
	ls.epochs[k] = epoch
	return true
}

// forget drops the epochs noted of a map no listener here hears.
func (ls *listeners) forget(name string) {
	ls.emu.Lock()
	defer ls.emu.Unlock()
	for k := range ls.epochs {
		if k.m == name {
			delete(ls.epochs, k)
		}
	}
}

// rebuild recomputes the table. ls.mu held.
func (ls *listeners) rebuild() {
	t := map[string]*mapListeners{}
	at := func(name string) *mapListeners {
		if t[name] == nil {
			t[name] = &mapListeners{}
		}
		return t[name]
	}
	for _, l := range ls.byID {
		at(l.mapN).local = append(at(l.mapN).local, l)
	}
	for _, bymap := range ls.subs {
		for name, s := range bymap {
			at(name).remote = append(at(name).remote, s)
		}
	}
	ls.table.Store(&t)
}

// of returns what listens to the named map (nil: nothing).
func (ls *listeners) of(name string) *mapListeners {
	t := ls.table.Load()
	if t == nil {
		return nil
	}
	return (*t)[name]
}

// AddListener registers fn for the events of the named map and returns
// the listener's id. A cluster-wide listener is announced to every member
// of this member's view before AddListener returns (members it could not
// reach, and members that join later, learn of it within the announce
// interval); from then on their writes reach it.
func (e *Engine) AddListener(ctx context.Context, name string, opts ListenerOptions, fn func(Event)) (string, error) {
	if err := ValidMapName(name); err != nil {
		return "", err
	}
	if fn == nil {
		return "", fmt.Errorf("stowage: map %q: a nil entry listener", name)
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultListenerQueue
	}
	if opts.Key != nil {
		opts.Key = bytes.Clone(opts.Key)
	}
	ls := &e.lis
	l := &listener{id: e.proto.Self() + "/" + strconv.FormatUint(ls.seq.Add(1), 10), mapN: name, opts: opts, fn: fn,
		ch: make(chan Event, opts.QueueSize), stop: make(chan struct{})}
	ls.mu.Lock()
	if !e.proto.Go(func() { l.run(e) }) {
		ls.mu.Unlock()
		return "", ErrClosed
	}
	if ls.byID == nil {
		ls.byID = map[string]*listener{}
	}
	ls.byID[l.id] = l
	ls.rebuild()
	ls.mu.Unlock()
	if !opts.Local {
		e.announceAll(ctx)
	}
	return l.id, nil
}

// RemoveListener unregisters a listener: it gets no event from then on
// (its function may still be running one). It does not wait for the
// listener's goroutine, so a listener may remove itself.
func (e *Engine) RemoveListener(ctx context.Context, id string) error {
	ls := &e.lis
	ls.mu.Lock()
	l := ls.byID[id]
	if l == nil {
		ls.mu.Unlock()
		return fmt.Errorf("%w: %q", ErrNoListener, id)
	}
	delete(ls.byID, id)
	ls.rebuild()
	if ml := ls.of(l.mapN); ml == nil || len(ml.local) == 0 {
		ls.forget(l.mapN)
	}
	ls.mu.Unlock()
	l.mu.Lock()
	l.done = true
	l.mu.Unlock()
	close(l.stop)
	if !l.opts.Local {
		e.announceAll(ctx)
	}
	return nil
}

// raise hands an event the owner just applied to whatever listens to
// its map. It never blocks. p.mu of the entry's partition is held.
func (e *Engine) raise(ev Event) {
	ml := e.lis.of(ev.Map)
	if ml == nil {
		return
	}
	ev.Key = bytes.Clone(ev.Key)
	if len(ml.local) > 0 && !e.lis.fresh(ev.Map, ev.Part, ev.Epoch) {
		e.m.listenerDropped.WithLabelValues(ev.Map, "stale").Inc()
	} else {
		for _, l := range ml.local {
			l.offer(ev, e.m)
		}
	}
	for _, s := range ml.remote {
		e.sendEvent(s, ev)
	}
}

// eventOf is the event of a write the owner applied: o's kind, whether
// the entry was live before (with value old) and the decision d.
func eventOf(o *op, live bool, d Decision) (EventKind, bool) {
	switch {
	case o.kind == opLock, o.kind == opSetTTL:
		return 0, false
	case o.kind == opExpire:
		return EventExpired, true
	case d.Delete && live:
		return EventRemoved, true
	case d.Delete:
		return 0, false
	case live:
		return EventUpdated, true
	}
	return EventAdded, true
}

// Engine is the engine the map is a handle of.
func (m *Map) Engine() *Engine { return m.n }
