package dmap

import (
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/partition"
)

// Methods of the member transport.
const (
	mOp      = "op"      // a map operation forwarded to the partition's owner
	mScan    = "scan"    // entries of partitions the callee owns
	mBackup  = "backup"  // owner -> backup: apply one record
	mRevert  = "revert"  // owner -> backup: undo a record whose write-through failed
	mFill    = "fill"    // owner -> backup: the whole partition
	mStatus  = "status"  // what the callee holds of some partitions
	mTake    = "take"    // new owner -> holder: hand the partitions over
	mTable   = "table"   // master -> member: install this table
	mGetTab  = "gettab"  // any -> any: send your table
	mHealth  = "health"  // is the callee loaded
	mMapInfo = "mapinfo" // size of a map's partitions on the callee
	mRelease = "release" // new owner -> old holders: drop your copy
	mSuspect = "suspect" // my connection to this member was refused: check it
)

// Answer codes of the engine's own calls (transport failures are errors
// of the Transport).
const (
	codeOK       = 0
	codeMoved    = 1 // the callee does not own the partition (per its table)
	codeNotReady = 2 // the callee owns it but is still acquiring it
	codeStale    = 3 // the caller's epoch or table is older than the callee's
	codeFailed   = 4 // the operation failed; Msg says why; nothing changed
	codeClosed   = 5 // the callee is shutting down
	codeRefused  = 6 // split-brain protection: too few members
	codeNeedFill = 7 // a backup whose copy is not whole: fill it again
)

// wver is a Version on the wire.
type wver struct {
	E uint64 `msgpack:"e"`
	S uint64 `msgpack:"s"`
}

func toW(v mapstore.Version) wver  { return wver{v.Epoch, v.Seq} }
func (w wver) v() mapstore.Version { return mapstore.Version{Epoch: w.E, Seq: w.S} }

// wrec is one entry (or deletion) on the wire.
type wrec struct {
	K []byte `msgpack:"k"`
	V []byte `msgpack:"v,omitempty"`
	R wver   `msgpack:"r"`
	D bool   `msgpack:"d,omitempty"`
}

// Operation kinds of a map write or read, executed by the owner.
const (
	opGet = iota + 1
	opPut
	opPutIfAbsent
	opReplace
	opDelete
	opCAS // write (or delete, with Del) only if the entry is still as read
)

type opReq struct {
	TV   int64  `msgpack:"tv"`
	Map  string `msgpack:"m"`
	Kind int    `msgpack:"o"`
	Key  []byte `msgpack:"k"`
	Val  []byte `msgpack:"v,omitempty"`
	Del  bool   `msgpack:"d,omitempty"`
	// CAS: the entry must be present with version Ver (ExpOK) or absent.
	ExpOK  bool `msgpack:"xo,omitempty"`
	ExpVer wver `msgpack:"xv"`
}

type opAns struct {
	Code  int    `msgpack:"c"`
	Msg   string `msgpack:"x,omitempty"`
	Old   []byte `msgpack:"o,omitempty"`
	Had   bool   `msgpack:"h,omitempty"`
	Wrote bool   `msgpack:"w,omitempty"`
	Ver   wver   `msgpack:"r"` // version of the entry now (or read)
}

type scanReq struct {
	TV    int64  `msgpack:"tv"`
	Map   string `msgpack:"m"`
	Parts []int  `msgpack:"p"`
}

type scanAns struct {
	Code    int    `msgpack:"c"`
	Entries []wrec `msgpack:"e"`
	Moved   []int  `msgpack:"mv,omitempty"` // partitions the callee does not own
}

type backupReq struct {
	TV    int64  `msgpack:"tv"`
	Map   string `msgpack:"m"`
	P     int    `msgpack:"p"`
	Epoch uint64 `msgpack:"e"` // the owner's epoch of this map partition
	Rec   wrec   `msgpack:"r"`
	// Revert: restore Prev (absent when !PrevOK) if the entry is at Rec.R;
	// Comp is the seq the owner spent on undoing the record in its store
	// (0: none), counted as applied like Rec's.
	PrevOK bool   `msgpack:"po,omitempty"`
	Prev   wrec   `msgpack:"pv"`
	Comp   uint64 `msgpack:"cp,omitempty"`
}

type codeAns struct {
	Code int    `msgpack:"c"`
	Msg  string `msgpack:"x,omitempty"`
}

// mapPart is one map's data of one partition, as a holder has it.
type mapPart struct {
	Map     string `msgpack:"m"`
	Ver     wver   `msgpack:"r"` // last version given out (owner) or applied (backup)
	Applied uint64 `msgpack:"a"` // every seq of Ver.E up to this is applied
	// Above lists the seqs above Applied that were applied, with their
	// keys: a promoted backup writes them again in its new epoch.
	Above   map[uint64][]byte `msgpack:"ab,omitempty"`
	Entries []wrec            `msgpack:"e"`
}

// partData is one partition of every map a holder has.
type partData struct {
	P    int       `msgpack:"p"`
	Maps []mapPart `msgpack:"ms"`
}

type fillReq struct {
	TV    int64    `msgpack:"tv"`
	Epoch uint64   `msgpack:"e"` // the owner's epoch of the partition
	Data  partData `msgpack:"d"`
	// Partial: only the maps in Data (made ready on the owner since the
	// last fill); the backup keeps its other maps of the partition.
	Partial bool `msgpack:"pt,omitempty"`
}

type releaseReq struct {
	TV    int64  `msgpack:"tv"`
	P     int    `msgpack:"p"`
	Epoch uint64 `msgpack:"e"` // the new owner's epoch
}

type statusReq struct {
	TV    int64 `msgpack:"tv"`
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
	TV    int64 `msgpack:"tv"`
	Parts []int `msgpack:"p"`
}

type takeAns struct {
	Code int        `msgpack:"c"`
	Msg  string     `msgpack:"x,omitempty"`
	Data []partData `msgpack:"d"`
	// Refused lists partitions the callee cannot give (it no longer holds
	// them, or owns them per a newer table).
	Refused []int `msgpack:"rf,omitempty"`
}

type tableMsg struct {
	Version int64      `msgpack:"v"`
	Owners  [][]string `msgpack:"o"`
	Since   []int64    `msgpack:"s"`
	Joined  [][]int64  `msgpack:"j"`
}

func (tm tableMsg) table() *partition.Table {
	return &partition.Table{Version: tm.Version, Owners: tm.Owners, Since: tm.Since, Joined: tm.Joined}
}

func tableOf(t *partition.Table) tableMsg {
	return tableMsg{Version: t.Version, Owners: t.Owners, Since: t.Since, Joined: t.Joined}
}

type healthAns struct {
	Loaded bool   `msgpack:"l"`
	Safe   bool   `msgpack:"sf"` // every owned partition has all its backups filled
	TV     int64  `msgpack:"tv"`
	Why    string `msgpack:"w,omitempty"`
}

type mapInfoReq struct {
	Map   string `msgpack:"m"`
	Parts []int  `msgpack:"p"`
}

type mapInfoAns struct {
	Code  int   `msgpack:"c"`
	Size  int   `msgpack:"n"`
	Moved []int `msgpack:"mv,omitempty"`
}

func enc(v any) []byte {
	b, err := msgpack.Marshal(v)
	if err != nil {
		// Every message type above encodes; a failure is a programming error.
		panic(fmt.Sprintf("stowage: encode %T: %v", v, err))
	}
	return b
}

var errBadMessage = errors.New("stowage: malformed message from a member")

func dec(b []byte, v any) error {
	if err := msgpack.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %w", errBadMessage, err)
	}
	return nil
}
