// Package dmap is the map engine: the maps this member holds, the
// records of each map in each partition (in memory, written through to
// the map's store), per-key ordering and versions, routing of each
// operation to its partition's owner, and the owner's write path. It is
// the backup.Holder of the replicator, which it wires with this member's
// cluster.Protocol (Engine).
//
// A PUT: Map.Put → the partition's owner per the table (forwarded over
// the protocol, batched, when that is another member; routed again when
// the partition moved) → on the owner, owner.go: the lease, write
// admission (partition.Replica.EnterWrite), the key's previous write must
// have finished, a version (epoch, seq) → backup.Replicator.Send and the
// map store's write in parallel → Sent.Wait → apply to memory →
// acknowledge. If the store or a sync backup failed, owner.go undoes what
// succeeded (a compensating store record, a revert on the backups) and
// the write fails having changed nothing.
//
// A fail-over is the replicator's (package backup); the engine's part is
// the Holder: TakeOver installs a copy or reads the map store, and starts
// the new epoch; RewriteAbove and RecordEpochStarts keep recovery from
// resurrecting writes that were never acknowledged.
//
// Expiry (expiry.go): each entry may carry an absolute deadline, set by
// the owner from a TTL and carried with the record to the backups and
// the store; the owner treats a dead entry as absent and removes it with
// a versioned delete (opExpire) from its expiry loop.
//
// Bulk operations (bulk.go): PutAll, GetAll and RemoveAll group keys by
// owner and send each owner one call; the owner runs each key through the
// path above.
//
// Entry listeners (events.go, events_remote.go): update raises an event
// where the owner applies a write; listeners here get it through a bounded
// queue each, and members with cluster-wide listeners through an outbox
// per member, over the member protocol (methods listen and events).
//
// Write-behind (writebehind.go): a map with MapSpec.WriteBehind skips the
// store on the write path; the owner queues each acknowledged record and
// stores the queue in batches once its records are the delay old. Every
// fragment keeps the keys not yet stored (owner and backups alike); the
// owner tells the backups what it stored, and a new owner stores what its
// copy still has pending. Flush and Close store the queue.
//
// Destroy and MapNames (destroy.go): every member of the view drops a
// destroyed map (memory, locks, store closed), then the caller removes
// its stored data through Config.RemoveStore.
//
// Imports: backup, cluster, partition, mapstore. The root package
// (stowage) builds an Engine from the configuration: which maps are
// persisted and how, through Config.OpenMap.
package dmap
