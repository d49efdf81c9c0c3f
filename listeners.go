package stowage

import (
	"context"
	"fmt"

	"github.com/stowage/stowage/internal/dmap"
)

// Entry listeners, as Hazelcast's IMap.addEntryListener: a function
// called with every entry added, updated, removed or expired in a map
// (or for one key of it).
//
//   - Where: events are raised on the partition's owner once a write is
//     durable, replicated and applied, so a failed write raises nothing.
//     A local listener (ListenerOptions.Local, Hazelcast's
//     addLocalEntryListener) hears the entries this member owns; any
//     other hears the whole cluster's: the owners send it their events.
//     When AddEntryListener returns, every member in this member's view
//     knows of the listener; a member that joins later (or could not be
//     reached) learns of it within a second, and events it applies before
//     then are not delivered.
//   - Order: the events of one key reach a listener in the order the
//     writes were applied, across fail-over and migration too (an event
//     from a partition's former owner that arrives after one from its new
//     owner is dropped, counted as "stale"). Events of different keys may
//     interleave in any order.
//   - Slow listeners: each listener has its own goroutine and bounded
//     queue (ListenerOptions.QueueSize, default 10,000); an owner keeps at
//     most 10,000 events per member it sends to. A write never waits for
//     a listener: an event that does not fit is dropped and counted in
//     stowage_listener_events_dropped_total{map,where}, and the listener
//     gets an EntryLost event saying how many it missed before its next
//     event. Events are not persisted or replicated: events of writes an
//     owner applied just before it died may be lost, and a listener
//     learns of it only when the loss was counted (a failed call, a full
//     queue), not when the owner died.
//   - Values: with IncludeValue the event carries the new value (added,
//     updated) and the old one (updated, removed, expired).
//   - Lifetime: RemoveEntryListener stops a listener (its function may
//     be running one last event); Close and Leave stop every listener and
//     wait for their goroutines, so a listener must not block forever.
//     A listener may call the map, and may remove itself.
//
// There is no eviction by size in stowage, so Hazelcast's EVICTED event
// never happens; an entry whose time to live or max idle time ran out is
// EntryExpired when the owner removes it (see Options.ExpiryInterval).

// EntryEventType says what happened to an entry.
type EntryEventType = dmap.EventKind

// Entry event types.
const (
	EntryAdded   = dmap.EventAdded   // a key with no value got one
	EntryUpdated = dmap.EventUpdated // a value was replaced
	EntryRemoved = dmap.EventRemoved // a value was deleted
	EntryExpired = dmap.EventExpired // the owner removed an entry whose time ran out
	// EntryLost carries no entry: Lost events meant for the listener
	// were dropped before its next one.
	EntryLost = dmap.EventLost
)

// ErrNoListener is returned by RemoveEntryListener for an id that is not
// registered (any more).
var ErrNoListener = dmap.ErrNoListener

// EntryEvent is one change of an entry.
type EntryEvent[K, V any] struct {
	Type EntryEventType
	Map  string
	Key  K
	// Value is the new value (added, updated) and OldValue the one
	// before (updated, removed, expired), when the listener asked for
	// values; HasValue and HasOldValue say which are set.
	Value, OldValue       V
	HasValue, HasOldValue bool
	// Member is the id of the member that applied the write.
	Member string
	// Lost is, for EntryLost, how many events were dropped.
	Lost int64
	// Err is set when the key or a value did not decode with the map's
	// codecs; the event is delivered with what did.
	Err error
}

// ListenerOptions choose what an entry listener hears.
type ListenerOptions struct {
	// IncludeValue makes events carry the values.
	IncludeValue bool
	// Local: only the entries this member owns.
	Local bool
	// QueueSize bounds the events waiting for the listener (default
	// 10,000); past it events are dropped and counted.
	QueueSize int
}

// ListenerID names a registered entry listener.
type ListenerID string

// AddEntryListener calls fn with the events of every key of the map (see
// the rules above); fn runs on the listener's own goroutine, one event
// at a time.
func (m *Map[K, V]) AddEntryListener(ctx context.Context, fn func(EntryEvent[K, V]), opts ListenerOptions) (ListenerID, error) {
	return m.addListener(ctx, nil, fn, opts)
}

// AddEntryListenerForKey is AddEntryListener for the events of key k
// only.
func (m *Map[K, V]) AddEntryListenerForKey(ctx context.Context, k K, fn func(EntryEvent[K, V]), opts ListenerOptions) (ListenerID, error) {
	kb, err := m.key(k)
	if err != nil {
		return "", err
	}
	if kb == nil {
		kb = []byte{}
	}
	return m.addListener(ctx, kb, fn, opts)
}

func (m *Map[K, V]) addListener(ctx context.Context, key []byte, fn func(EntryEvent[K, V]), opts ListenerOptions) (ListenerID, error) {
	if fn == nil {
		return "", fmt.Errorf("stowage: map %q: a nil entry listener", m.m.Name())
	}
	id, err := m.m.Engine().AddListener(ctx, m.m.Name(), dmap.ListenerOptions{
		Key: key, IncludeValue: opts.IncludeValue, Local: opts.Local, QueueSize: opts.QueueSize,
	}, func(ev dmap.Event) { fn(m.entryEvent(ev, opts.IncludeValue)) })
	return ListenerID(id), err
}

// entryEvent decodes an event of the engine.
func (m *Map[K, V]) entryEvent(ev dmap.Event, vals bool) EntryEvent[K, V] {
	out := EntryEvent[K, V]{Type: ev.Kind, Map: ev.Map, Member: ev.Member, Lost: ev.Lost}
	if ev.Kind == dmap.EventLost {
		return out
	}
	var err error
	if out.Key, err = m.kc.Decode(ev.Key); err != nil {
		out.Err = fmt.Errorf("stowage: map %q: decode key of an entry event: %w", m.m.Name(), err)
	}
	if !vals {
		return out
	}
	if ev.Kind == dmap.EventAdded || ev.Kind == dmap.EventUpdated {
		if out.Value, err = m.decode(ev.Val); err == nil {
			out.HasValue = true
		} else if out.Err == nil {
			out.Err = err
		}
	}
	if ev.Kind != dmap.EventAdded {
		if out.OldValue, err = m.decode(ev.Old); err == nil {
			out.HasOldValue = true
		} else if out.Err == nil {
			out.Err = err
		}
	}
	return out
}

// RemoveEntryListener stops the listener id: it is called with no event
// from then on (it may be running one when this returns).
func (m *Map[K, V]) RemoveEntryListener(ctx context.Context, id ListenerID) error {
	return m.m.Engine().RemoveListener(ctx, string(id))
}
