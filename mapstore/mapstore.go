package mapstore

import (
	"context"
	"errors"
)

// Version orders the changes of one partition: by Epoch, then by Seq.
// A new owner of a partition starts a new epoch; Seq grows within the
// partition across epochs. Versions are never taken from a clock.
type Version struct {
	Epoch uint64
	Seq   uint64
}

// Less reports whether v orders before w.
func (v Version) Less(w Version) bool {
	if v.Epoch != w.Epoch {
		return v.Epoch < w.Epoch
	}
	return v.Seq < w.Seq
}

// Record is one versioned change of a map entry, or a loaded entry.
// Key and Value are owned by the store once passed in, and owned by the
// caller once returned: neither side modifies them afterwards.
type Record struct {
	Partition int
	Version   Version
	Key       []byte
	Value     []byte // nil when Deleted
	Deleted   bool
	// Expires is the entry's absolute deadline in Unix nanoseconds (0:
	// it never expires). It is data carried with the entry, like Value:
	// a store keeps it and returns it, and the map treats an entry whose
	// deadline passed as gone (see package internal/dmap, expiry.go).
	// It never orders records; Version does.
	Expires int64
}

// MapStore is the MapStore/MapLoader contract of Hazelcast, as SeaTunnel's
// FileMapStore implements it, with versions added so that recovery can
// order changes without clocks. The map calls Store/Delete on the write
// path and returns to its caller only after they returned nil: a nil return
// means the change is durable.
//
// Implementations are safe for concurrent use. Records of one key are never
// passed concurrently; records of different keys may be.
type MapStore interface {
	// Store makes one entry durable.
	Store(ctx context.Context, r Record) error
	// StoreAll makes several entries durable, all in one batch where the
	// store can.
	StoreAll(ctx context.Context, rs []Record) error
	// Delete makes the deletion of r.Key durable (r.Value is ignored).
	Delete(ctx context.Context, r Record) error
	// DeleteAll makes several deletions durable.
	DeleteAll(ctx context.Context, rs []Record) error

	// Load returns the live entry of key, or ok false if there is none.
	Load(ctx context.Context, key []byte) (r Record, ok bool, err error)
	// LoadAll returns the live entries of those keys that have one.
	LoadAll(ctx context.Context, keys [][]byte) ([]Record, error)
	// LoadAllKeys returns every live key.
	LoadAllKeys(ctx context.Context) ([][]byte, error)
	// LoadPartition calls fn for every live entry of partition p; this is
	// what EAGER and LAZY loading use. Damage found on the way is reported
	// through Options.OnDamage and skipped, never returned as an error
	// unless nothing of the partition could be read.
	LoadPartition(ctx context.Context, p int, fn func(Record) error) error

	// Close flushes and releases the store and stops its goroutines.
	Close() error
}

// SnapshotSource gives a store the live entries of one partition, from
// memory, so that compaction never needs to re-read the log. Upto is a
// version such that every change of the partition at or below it is
// reflected in entries (entries may also reflect later ones; each carries
// its own version). The entries' keys and values may share memory with
// the source's: a store reads them and never modifies them.
type SnapshotSource func(ctx context.Context, p int) (entries []Record, upto Version, err error)

// Snapshotter is implemented by stores that compact from memory.
type Snapshotter interface {
	// SetSnapshotSource installs the source used by compaction.
	SetSnapshotSource(src SnapshotSource)
	// Compact snapshots every partition whose log has grown and deletes
	// the log files that snapshots now cover.
	Compact(ctx context.Context) error
}

// LiveSizes calls fn for each live entry of partition p with the lengths
// of its key and value, its version and its deadline (0: none): what a
// store needs to tell how much of what it holds is live, without the
// entries being gathered as for a snapshot.
type LiveSizes func(ctx context.Context, p int, fn func(keyLen, valueLen int, v Version, expires int64)) error

// LiveSizer is implemented by Snapshotters that count live bytes with
// LiveSizes when they have it, rather than with the SnapshotSource.
type LiveSizer interface {
	SetLiveSizes(sizes LiveSizes)
}

// The interfaces below are optional: the map looks for them on a
// MapStore and uses what it finds. A store without them still works, with
// the limits each one names.

// LastVersioner is implemented by stores that know each partition's
// highest version, deletes and epoch starts included. A new owner
// continues from it; without it the map takes the highest version of the
// live entries it loaded, so after a delete of the newest entry a version
// can be given twice across a restart.
type LastVersioner interface {
	LastVersion(p int) Version
}

// EpochStarter is implemented by stores that record where an owner's
// epoch starts (invariant 2 of DESIGN.md, "no resurrection"): after a
// fail-over, the new owner of p starts epoch v.Epoch having taken over
// everything up to v.Seq, and StartEpochs returns once that is durable. On
// recovery, records of an older epoch beyond v.Seq (writes of the old
// owner that were never acknowledged) are dropped. Without it a write that
// failed on a member which then died can come back after a full restart.
type EpochStarter interface {
	StartEpochs(ctx context.Context, starts map[int]Version) error
}

// Replayer is implemented by stores with a faster loading path than
// LoadPartition: ReplayPartition hands over the newest snapshot's entries,
// then every log record recovery applies, deletes included (Deleted set),
// in version order; the caller keeps, per key, the record of the highest
// version. PendingCount is a size hint: how many records of p are known
// and not yet loaded.
type Replayer interface {
	ReplayPartition(ctx context.Context, p int, fn func(Record) error) error
	PendingCount(p int) int
}

// KeyReplayer is Replayer for a caller that keeps entries in a map keyed
// by strings: size is called first with an upper bound of the records to
// come, and fn gets each record's key also as a string sharing the
// record's bytes, each key's records in increasing versions, so that
// applying each in turn (a put sets the key, a delete removes it) leaves
// the record of the highest version.
type KeyReplayer interface {
	ReplayPartitionKeys(ctx context.Context, p int, size func(n int), fn func(key string, r Record) error) error
}

// Admitter is implemented by stores that throttle writers while their
// compaction catches up, so that disk use stays bounded (invariant 5).
// The map calls Admit before it gives a write its version.
type Admitter interface {
	Admit(ctx context.Context) error
}

// PartitionOwner is implemented by stores that several members share:
// each partition's owner is the one member that snapshots it. Acquire
// says this member now owns p with its live entries in memory (served by
// the SnapshotSource, not loaded from storage); Release says it no longer
// does, and that a later load of p must read storage afresh.
type PartitionOwner interface {
	Acquire(p int)
	Release(p int)
}

// DiskUser is implemented by stores that can say, cheaply (from a
// listing, without reading the files), what they keep on storage.
type DiskUser interface {
	DiskUsage(ctx context.Context) (DiskUsage, error)
}

// DiskUsage is what a store keeps on storage, in files and bytes.
type DiskUsage struct {
	LogFiles      int   `json:"log_files"`
	LogBytes      int64 `json:"log_bytes"`
	Snapshots     int   `json:"snapshots"`
	SnapshotBytes int64 `json:"snapshot_bytes"`
	OtherFiles    int   `json:"other_files"`
	DiskBytes     int64 `json:"disk_bytes"` // every file, the others included
}

// Errors of the contract.
var (
	// ErrClosed is returned by calls on a closed store.
	ErrClosed = errors.New("stowage/mapstore: store is closed")
	// ErrLocked is returned when another process holds the store.
	ErrLocked = errors.New("stowage/mapstore: store is locked by another process")
)

// CodecRecorder is an optional interface of stores that record the name
// of the codecs a map's data was written with (in META), so that opening
// the map with other codecs fails instead of decoding foreign bytes.
type CodecRecorder interface {
	// RecordedCodec reads the recorded name ("" when none), from the
	// storage itself: another member may have recorded it.
	RecordedCodec(ctx context.Context) (string, error)
	// RecordCodec records name.
	RecordCodec(ctx context.Context, name string) error
}
