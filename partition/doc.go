// Package partition is what a partition is, free of members' data and of
// maps: which partition a key belongs to (Of: xxHash64 of the serialized
// key modulo the partition count, 271 by default as in Hazelcast; the hash
// itself lives in serde/keyhash because the map stores record it), the
// versioned table that names each partition's owner and backups and how
// the master computes it (Assign: balanced, minimal movement, promotion
// of the first live backup), and the replica state machine of one
// partition on this member (Replica).
//
// A Replica is in one of five states: None (holds nothing), Backup (a
// copy, filled by the owner or not), Acquiring (owner per the table,
// getting the data), Active (serving reads and writes) and Held (was the
// owner; keeps the data until the new owner took it). Its methods are its
// moves: OnTable on each new table, Acquiring/StillAcquiring/Activate
// through a take-over, Fill, ApplyBackup, HandOver and Release for what
// other members ask, BeginRefill/End for an owner refilling its backups,
// EnterWrite/EnterRead for write admission. Each takes the replica's own
// lock and does no I/O; the callbacks it is given run under that lock so
// that the maps' data never changes apart from the state it goes with.
//
// Imports: serde/keyhash only. Package backup drives the replicas; the
// map engine (internal/dmap) admits operations through them.
package partition
