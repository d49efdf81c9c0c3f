package backup

import (
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// Methods of the member protocol that move partition data.
const (
	mBackup  = "backup"  // owner -> backup: apply one record
	mRevert  = "revert"  // owner -> backup: undo a record whose write failed
	mFill    = "fill"    // owner -> backup: the whole partition, or some maps of it
	mStatus  = "status"  // what the callee holds of some partitions
	mTake    = "take"    // new owner -> holder: hand the partitions over
	mRelease = "release" // new owner -> old holders: drop your copy
	mDigest  = "digest"  // owner -> backup: sum up your copy, for a delta fill
)

// Answer codes of those methods (transport failures are errors of the
// transport).
const (
	codeOK       = 0
	codeMoved    = 1 // the callee does not own the partition (per its table)
	codeStale    = 3 // the caller's epoch or table is older than the callee's
	codeFailed   = 4 // the call failed; Msg says why; nothing changed
	codeNeedFill = 7 // a backup whose copy is not whole: fill it again
	codeDelta    = 8 // a delta's receiver no longer has the copy it was made against: send it whole
)

// Ver is a mapstore.Version on the wire.
type Ver struct {
	E uint64 `msgpack:"e"`
	S uint64 `msgpack:"s"`
}

// VerOf is v on the wire.
func VerOf(v mapstore.Version) Ver { return Ver{v.Epoch, v.Seq} }

// Version is the version w carries.
func (w Ver) Version() mapstore.Version { return mapstore.Version{Epoch: w.E, Seq: w.S} }

// Entry is one key's entry (or deletion) on the wire.
type Entry struct {
	K []byte `msgpack:"k"`
	V []byte `msgpack:"v,omitempty"`
	R Ver    `msgpack:"r"`
	D bool   `msgpack:"d,omitempty"`
	// X is the entry's expiry deadline in Unix nanoseconds, as the owner
	// decided it (0: none). A backup keeps it and never acts on it: the
	// owner removes an expired entry with an ordinary versioned delete.
	X int64 `msgpack:"x,omitempty"`
}

// MapPart is one map's data of one partition, as a holder has it.
type MapPart struct {
	Map     string `msgpack:"m"`
	Ver     Ver    `msgpack:"r"` // last version given out (owner) or applied (backup)
	Applied uint64 `msgpack:"a"` // every seq of Ver.E up to this is applied
	// Above lists the seqs above Applied that were applied, with their
	// keys: a promoted backup writes them again in its new epoch.
	Above   map[uint64][]byte `msgpack:"ab,omitempty"`
	Entries []Entry           `msgpack:"e"`
	// Pending lists the keys (K) whose latest write (R, the version) a
	// write-behind map has not stored yet: a new owner stores them.
	Pending []Entry `msgpack:"wb,omitempty"`
	// Delta, when set, says Entries are those of some buckets only: the
	// receiver keeps its own entries of the others (delta.go).
	Delta *Delta `msgpack:"dl,omitempty"`
}

// PartData is one partition of every map a holder has.
type PartData struct {
	P    int       `msgpack:"p"`
	Maps []MapPart `msgpack:"ms"`
}

// Record is one write of a map's partition as the owner sends it to a
// backup: the change, and for a revert what to restore.
type Record struct {
	Map   string `msgpack:"m"`
	P     int    `msgpack:"p"`
	Epoch uint64 `msgpack:"e"` // the owner's epoch of this map partition
	Rec   Entry  `msgpack:"r"`
	// Revert: restore Prev (absent when !PrevOK) if the entry is at Rec.R;
	// Comp is the seq the owner spent on undoing the record in its store
	// (0: none), counted as applied like Rec's.
	PrevOK bool   `msgpack:"po,omitempty"`
	Prev   Entry  `msgpack:"pv"`
	Comp   uint64 `msgpack:"cp,omitempty"`
}

type codeAns struct {
	Code int    `msgpack:"c"`
	Msg  string `msgpack:"x,omitempty"`
}

type fillReq struct {
	TV    int64    `msgpack:"tv"` // the table version the fill was made under
	Epoch uint64   `msgpack:"e"`  // the owner's epoch of the partition
	Data  PartData `msgpack:"d"`
	// Partial: only the maps in Data (made ready on the owner since the
	// last fill); the backup keeps its other maps of the partition.
	Partial bool `msgpack:"pt,omitempty"`
}

type releaseReq struct {
	P     int    `msgpack:"p"`
	Epoch uint64 `msgpack:"e"` // the new owner's epoch
}

type statusReq struct {
	Parts []int `msgpack:"p"`
}

type partStatus struct {
	Kind  partition.Kind `msgpack:"k"`
	Epoch uint64         `msgpack:"e"` // highest epoch over the maps
	Seqs  uint64         `msgpack:"s"` // sum of the maps' last seqs (a tie-break)
}

type statusAns struct {
	Code int          `msgpack:"c"`
	TV   int64        `msgpack:"tv"`
	St   []partStatus `msgpack:"st"`
}

type takeReq struct {
	Parts []int `msgpack:"p"`
	// Digests are, per partition, the asker's own copy summed up: the
	// data comes as a delta against it (delta.go).
	Digests map[int][]Digest `msgpack:"dg,omitempty"`
	// Stale lists the partitions whose copy the asker takes even if it
	// may lack writes (HoldStale: nothing better is left).
	Stale []int `msgpack:"st,omitempty"`
}

type digestReq struct {
	P int `msgpack:"p"`
}

type digestAns struct {
	Code int      `msgpack:"c"`
	D    []Digest `msgpack:"d"`
}

type takeAns struct {
	Code int        `msgpack:"c"`
	Msg  string     `msgpack:"x,omitempty"`
	Data []PartData `msgpack:"d"`
	// Refused lists partitions the callee cannot give (it no longer holds
	// them, or owns them per a newer table).
	Refused []int `msgpack:"rf,omitempty"`
}
