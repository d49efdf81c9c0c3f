package stowage

import (
	"context"
	"fmt"
	"strconv"
)

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

// propBehindCapacity bounds each write-behind map's queue on a member.
const propBehindCapacity = "hazelcast.map.write.behind.queue.capacity"

// defaultBehindCapacity is Hazelcast's default of propBehindCapacity.
const defaultBehindCapacity = 50_000

// behindCapacity reads propBehindCapacity: the most records a
// write-behind map's queue holds on this member before writes fail with
// ErrQueueFull (Hazelcast bounds all maps of a member together; stowage
// bounds each map).
func (n *Node) behindCapacity() (int, error) {
	v := n.cfg.Hazelcast.Properties[propBehindCapacity]
	if v == "" {
		return defaultBehindCapacity, nil
	}
	c, err := strconv.Atoi(v)
	if err != nil || c < 1 {
		return 0, fmt.Errorf("stowage: hazelcast.properties.%s: %q is not a whole number of records of at least 1", propBehindCapacity, v)
	}
	return c, nil
}
