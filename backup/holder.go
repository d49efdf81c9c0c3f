package backup

import "context"

// Holder is what the replicator needs of the maps held on this member
// (the map engine, internal/dmap, implements it): their data of one
// partition as bytes, and the map side of a fill, a backup record and a
// take-over. The replicator never sees a map's typed values.
//
// Methods named "under the replica's lock" are called while the
// partition's partition.Replica is locked: they must not call the
// replicator, and must not wait for I/O.
type Holder interface {
	// Export returns partition p of every map held here: owner data
	// (owner true: the maps ready here, with no gaps) or a backup's data
	// (the maps filled here). pos > 0 keeps only the maps that keep at
	// least pos backups (the data for the backup at place pos).
	Export(p int, owner bool, pos int) PartData
	// MaxSyncBackups is the most synchronous backups any map keeps: a
	// replica at a later place is an async backup of every map.
	MaxSyncBackups() int
	// SeqSum is the sum of partition p's last seqs over the maps: how far
	// a holder's copy got, to choose between copies of one epoch.
	SeqSum(p int) uint64
	// Drop forgets what this member holds of partition p (under the
	// replica's lock).
	Drop(p int)
	// ReleaseStores tells the map stores this member does not serve p
	// (under the replica's lock).
	ReleaseStores(p int)
	// PrepareFill makes sure the maps data names are held here (opening
	// their stores as needed) and returns the step that installs data
	// under the replica's lock: with partial, only the maps in data;
	// else data replaces every map's partition. A map part that is a
	// delta keeps this member's entries of the buckets it does not redo;
	// if this member's copy no longer sums to the delta's base, install
	// changes nothing and returns a *DeltaStaleError.
	PrepareFill(ctx context.Context, data PartData, partial bool) (install func() error, err error)
	// Digest sums up partition p of every map held here, whatever this
	// member holds it as (a Summer of BucketsFor its entry count per
	// map): what a delta to this member is made against.
	Digest(p int) []Digest
	// PrepareApply makes sure rec's map is held here and returns the step
	// that applies rec (or, with revert, undoes it) to the backup's copy
	// under the replica's lock; that step fails with a
	// partition.RefusedError (NeedFill) when the map was not filled here.
	PrepareApply(ctx context.Context, rec *Record, revert bool) (apply func() error, err error)
	// TakeOver installs partition p's data for a new owner from src and
	// starts the partition's new epoch, epoch(highest epoch the data
	// knows); it returns that epoch. What is kept of the old epoch is
	// what has no gap before it. Map parts of src.Data that are deltas
	// are taken as PrepareFill takes them (a *DeltaStaleError, and
	// nothing installed, when this member's copy changed).
	TakeOver(ctx context.Context, p int, src Source, epoch func(seen uint64) uint64) (uint64, error)
	// RecordEpochStarts makes the epoch starts of a take-over (partition
	// -> epoch) durable in the map stores, one batch per store.
	RecordEpochStarts(ctx context.Context, starts map[int]uint64) error
	// RewriteAbove writes again, in the new epoch, what a promoted
	// backup's copy applied beyond its last gap-free seq.
	RewriteAbove(ctx context.Context, p int) error
	// Activated is told once partition p is served here: maps the copy
	// lacked load their part now.
	Activated(ctx context.Context, p int)
}

// Source is where a new owner's data of a partition comes from.
type Source struct {
	// Store: no member has a copy; the map stores are read.
	Store bool
	// Data is a copy from another member; nil: this member's own.
	Data *PartData
	// Promoted: the copy is a backup's, not an owner's.
	Promoted bool
	// Stale: the backup's copy may lack acknowledged writes (it left the
	// replica set since its fill); a map with a store is read from it.
	Stale bool
	// OwnHeld: this member's own copy, held as the owner (no gaps).
	OwnHeld bool
}
