// Package stowage keeps a stream-processing engine's cluster state safe:
// partitioned in-memory maps with synchronous backups on other members,
// written through to a map store on shared storage and loaded EAGERly on
// start, so that state comes back by itself after every member was
// stopped. It is the Go counterpart of Apache SeaTunnel's engine
// persistence (Hazelcast IMap + FileMapStore), configured by the same
// seatunnel.yaml and hazelcast.yaml.
//
// Open a Node from a parsed configuration, then a typed Map:
//
//	cfg, err := config.Load("/opt/seatunnel/config")
//	if err != nil {
//		return err
//	}
//	node, err := stowage.Open(ctx, stowage.Options{Config: cfg})
//	if err != nil {
//		return err
//	}
//	defer node.Close() // or node.Leave(ctx): hand the partitions over first
//	jobs, err := stowage.GetMap(ctx, node, "engine_runningJobInfo", serde.String(), serde.Bytes())
//	if err != nil {
//		return err
//	}
//	err = jobs.Put(ctx, "job-1", state) // returns once durable and on every sync backup
//
// The configuration can as well be built in Go, without files: the
// defaults, then a map entry per persisted map (see Example):
//
//	cfg := config.Default()
//	cfg.AddMap(config.MapConfig{Pattern: "engine*", MapStore: config.LocalMapStore("/var/lib/stowage", "seatunnel")})
//	node, err := stowage.Open(ctx, stowage.Options{Config: cfg})
//
// Maps whose names match a hazelcast.yaml map entry with an enabled
// map-store are persisted (package mapstore/filestore on any fsbackend, or
// bbolt for a member alone); others live in memory only.
//
// The local disk back end (fs.defaultFS: file:///) is built in. For HDFS
// and the object stores, import the back end's package for its side
// effect (fsbackend/hdfs, s3, oss, cos, gcs) or fsbackend/all.
//
// # The cluster
//
// With hazelcast.network.join.tcp-ip enabled, Open joins the members of the
// member list (package cluster: memberlist for membership, a TCP transport
// for calls). The oldest member is the master: it assigns the 271
// partitions (partition.Assign) and publishes a versioned table naming
// each partition's owner and backups; the table's replica count is one
// more than the most backups any map keeps (backup-count, default
// seatunnel.engine.backup-count, plus async-backup-count). A member
// serves an operation on a partition only while it owns it; others
// forward it to the owner and route again when it moved.
//
// The owner orders each write of a partition with a version (epoch,
// sequence), hands the record to its map store and to every sync backup in
// parallel, and acknowledges only when all succeeded; what succeeded is
// undone when one failed. Backups apply records by version and refuse
// those of an owner the table no longer names or of an older epoch.
//
// A member that becomes a partition's owner takes it over: it asks every
// live member what it holds of the partition (which also makes them install
// its newer table, so an old owner stops), takes the newest copy (the old
// owner's hand-over, else a backup's copy filled since the backup last
// joined the replica set, else the map store), starts a new epoch with a
// durable epoch start per map (records of older epochs beyond it are
// dropped at recovery: no resurrection), writes again what a backup applied
// beyond a gap, fills every backup, tells the other holders to drop their
// copies, and only then serves the partition. Epochs grow with the table
// version. Node.Safe reports when every backup is filled (Hazelcast's
// cluster-safe state). A persisted map without sync backups is taken over
// from its map store, never from an async backup's copy, which may lack
// acknowledged writes; async backups hold up no write (a fill waits for
// one at most a second and is tried again later).
//
// An owner serves only under a lease (Options.Lease): the other members
// confirm, every half second, that no newer table exists; the lease is
// shorter than failure detection, so a member that hung and resumes asks
// before it serves, instead of answering from its stale copy.
//
// Split-brain protection (hazelcast.split-brain-protection with a map's
// split-brain-protection-ref) refuses the map's writes (or reads) while
// fewer members than its minimum are live. While a member sees fewer members than
// the largest minimum of any map, its master publishes no new table: the
// smaller side of a split keeps the table it had rather than taking the
// lost members' partitions over (its copies would otherwise outrank the
// majority's when the network heals), so every map's partitions owned or
// backed up by the lost members wait for them, protected or not. Members check at Open that they
// share the map stores' storage and refuse with ErrNotShared otherwise.
//
// # Per-key locks
//
// Map.Lock, TryLock, Unlock, IsLocked and ForceUnlock are Hazelcast's
// IMap locks. The holder is a lock owner id carried in the context
// (WithLockOwner; NewLockOwner makes one), not a goroutine; locks are
// reentrant for their owner, and every lock ends at the latest when its
// lease does. Each acquisition returns a FencingToken larger than every
// earlier one of the key, also across fail-over:
//
//	ctx = stowage.WithLockOwner(ctx, taskID)
//	token, ok, err := metrics.TryLock(ctx, jobID, 5*time.Second, 30*time.Second)
//	if err != nil || !ok {
//		return err // or: locked elsewhere for 5 s
//	}
//	defer metrics.Unlock(ctx, jobID)
//	err = metrics.Put(ctx, jobID, next) // the holder's write passes its lock
//
// A lock is held by the key's partition owner and applied on its sync
// backups, so it survives fail-over and migration; the locks taken through
// a member that left the cluster are released. Writes to a locked key by
// other owners wait for the unlock or the end of the lease. Locks are not
// persisted: after a full restart nothing is locked (locks.go says more).
//
// # Expiry
//
// An entry may have a time to live: its own (Map.PutWithTTL, Map.SetTTL,
// HTTP PUT ?ttl=) or its map's (time-to-live-seconds in the map's
// hazelcast.yaml entry, applied to every write without one); a map's
// max-idle-seconds expires entries neither read nor written for that
// long. The partition's owner turns a time to live into an absolute
// deadline by its own clock when it applies the write; the deadline is
// stored with the entry, replicated to the backups and written to the map
// store, so EAGER and LAZY loads know it and an entry that expired while
// the cluster was down is never served again. An expired entry is absent
// to every read at once; the owner then removes it (every
// Options.ExpiryInterval, default 1 s) with an ordinary versioned delete,
// replicated and stored, after which compaction frees its disk.
// Options.OnExpired hears of each removal. Clocks decide only when an
// entry dies, never the order of writes: under clock skew between
// members an entry dies up to the skew earlier or later after a
// fail-over, and a removal is never undone by a slower clock. Max idle
// keeps access times on the owner only, unreplicated: a fail-over, a
// restart or a migration starts every entry's idle period afresh.
//
// Finished jobs' history: Node.HistoryJobTTL is
// seatunnel.engine.history-job-expire-minutes as a duration; the engine
// writes a finished job's state, metrics and DAG info with
// Map.PutWithTTL(ctx, k, v, node.HistoryJobTTL()) so its history maps stay
// bounded in memory and on disk.
//
// # Bulk operations
//
// Map.PutAll, PutAllWithTTL, GetAll and RemoveAll group their keys by
// partition owner and make one call per member (the caller's own keys
// run where they are), each key acknowledged under the rule of a single
// operation; a bulk write is not atomic as a whole: failed keys are named
// in a *BulkError (see map_bulk.go).
//
// # Write-behind
//
// A map whose map-store sets write-delay-seconds above 0 is written
// behind: a write is acknowledged once it is in memory on the owner and
// its sync backups, and stored about that many seconds later, at most
// write-batch-size records per store call; write-coalescing keeps only a
// key's latest write queued. The backups keep the keys not yet stored, so
// a fail-over keeps the queue. Map.Flush and Node.Flush store it on
// demand; Leave and Close store this member's queue first. A crash of
// every member loses the writes of about the last write-delay-seconds
// (docs/write-behind.md). Write-through stays the default.
//
// # Entry listeners
//
// Map.AddEntryListener (and AddEntryListenerForKey) calls a function with
// every entry added, updated, removed or expired, raised by the
// partition's owner once the write is applied; local listeners hear the
// entries their member owns, others the whole cluster's. One key's events
// arrive in write order, across fail-over too; a slow listener never holds
// up a write: its bounded queue drops what does not fit, counts it in
// stowage_listener_events_dropped_total and tells the listener with an
// EntryLost event (see listeners.go and docs/listeners.md).
//
// # Map lifecycle and codecs
//
// Node.MapNames and MapExists list the maps any member holds; Map.Destroy
// drops a map on every member and removes its stored data. A persisted
// map records its codecs' names with its data, and GetMap with other
// codecs fails with ErrCodecMismatch (see GetMap and destroy.go).
//
// # The packages
//
// This package is the public face: Options, Open, Node (Close, Leave and
// what it reports), Map and GetMap, Node.OpenCheckpointStorage (a
// member's checkpoint storage, under a namespace lease of its own) and
// OpenCheckpointStorage (the same without a lease, for tools), and the
// errors (errors.go). It wires the rest from the configuration: membership and
// the transport (package cluster), the map engine (internal/dmap) with
// each map's store (mapstore/filestore or mapstore/boltstore on an
// fsbackend), and the storage probe. Below it, imports flow one way
// (internal/layering checks it): internal/dmap → backup → cluster →
// partition → mapstore, checkpoint → config → fsbackend, serde. The HTTP
// API (package httpapi) is built on this package's public API only.
package stowage
