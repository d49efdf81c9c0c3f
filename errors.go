package stowage

import (
	"errors"

	"github.com/stowage/stowage/fsbackend/nslease"
	"github.com/stowage/stowage/internal/dmap"
)

// Errors of Open, besides configuration errors (config) and a bbolt file
// another process holds (mapstore.ErrLocked, naming the file).
var (
	// ErrNotShared: the members do not see the same map-store storage (a
	// local directory on each host, another bucket or namespace).
	ErrNotShared = errors.New("stowage: map-store storage is not shared by the members")
	// ErrNamespaceInUse: another live cluster (or stand-alone member)
	// writes a map store's namespace/clusterName; the error names the
	// namespace and clusterName as configured and the other cluster's
	// members (docs/security.md, Storage).
	ErrNamespaceInUse = nslease.ErrHeld
)

// Errors of map calls.
var (
	// ErrInvalidMapName: the map name is empty, holds "/", "\\" or NUL,
	// or is "." or "..".
	ErrInvalidMapName = dmap.ErrInvalidMapName
	// ErrNoQuorum: fewer members than the map's split-brain protection
	// needs are live; the call changed nothing.
	ErrNoQuorum = dmap.ErrNoQuorum
	// ErrIndeterminate: the partition's owner stopped answering after the
	// write reached it; the write may or may not have taken effect (read
	// the key to tell).
	ErrIndeterminate = dmap.ErrIndeterminate
	// ErrCodecMismatch: GetMap of a persisted map with codecs other than
	// those its data was written with (see GetMap).
	ErrCodecMismatch = dmap.ErrCodecMismatch
	// ErrQueueFull: a write-behind map's queue on the partition's owner
	// holds hazelcast.map.write.behind.queue.capacity records not yet
	// stored (the map store is failing or slower than the writes); the
	// write changed nothing. Hazelcast's ReachedMaxSizeException. Over the
	// member protocol the error keeps its message, not its identity.
	ErrQueueFull = dmap.ErrQueueFull
	// ErrNamespaceLeaseLost: this member cannot tell that its cluster
	// still holds the namespace lease of the map's store (the renewals
	// failed, or another cluster took the namespace over), so it refuses
	// the write, which changed nothing; the error names the namespace and
	// clusterName as configured. Reads still work. Writes are accepted
	// again once the member sees its cluster's lease renewed
	// (docs/security.md, Storage).
	ErrNamespaceLeaseLost = nslease.ErrLost
)

// Errors at any time.
var (
	// ErrClosed: the node, or the map's node, is closed.
	ErrClosed = dmap.ErrClosed
)
