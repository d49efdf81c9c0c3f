package stowage

import "context"

// Flush stores what the map's write-behind queues hold (map-store
// write-delay-seconds > 0) on every member, and returns once the map
// store has it. A write-through map has nothing queued: Flush returns at
// once. It fails, naming the member, where a member could not store its
// queue or did not answer; what is not stored stays queued.
func (m *Map[K, V]) Flush(ctx context.Context) error { return m.m.Flush(ctx) }

// Flush stores the write-behind queues of every map on every member (see
// Map.Flush). A graceful Leave or Close stores this member's queues
// itself.
func (n *Node) Flush(ctx context.Context) error { return n.e.Flush(ctx, "") }
