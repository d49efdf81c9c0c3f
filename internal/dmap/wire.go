package dmap

import "github.com/stowage/stowage/backup"

// Methods of the member protocol the map engine serves.
const (
	mOp      = "op"      // a map operation forwarded to the partition's owner
	mScan    = "scan"    // entries of partitions the callee owns
	mHealth  = "health"  // is the callee loaded
	mMapInfo = "mapinfo" // size of a map's partitions on the callee

	mTakeOvers = "takeovers" // the callee's last take-overs
)

// Answer codes of the map engine's calls (transport failures are errors
// of the transport).
const (
	codeOK       = 0
	codeMoved    = 1 // the callee does not own the partition (per its table)
	codeNotReady = 2 // the callee owns it but is still acquiring it
	codeFailed   = 4 // the operation failed; Msg says why; nothing changed
	codeRefused  = 6 // split-brain protection: too few members
	// codeLeaseLost: the owner's map store refuses writes, its cluster
	// cannot confirm it still holds the namespace (nslease.ErrLost).
	codeLeaseLost = 7
	// codeUnknown: the write failed because the owner was closing or the
	// call's context ended while it was being replicated: a backup may
	// have applied it, and may hold it as the partition's data once the
	// owner is gone, so the outcome is unknown (ErrIndeterminate).
	codeUnknown = 8
)

// Operation kinds of a map write or read, executed by the owner.
const (
	opGet = iota + 1
	opPut
	opPutIfAbsent
	opReplace
	opDelete
	opCAS  // write (or delete, with Del) only if the entry is still as read
	opLock // a lock operation (locks.go): Val is its lockReq
)

type opReq struct {
	Map  string `msgpack:"m"`
	Kind int    `msgpack:"o"`
	Key  []byte `msgpack:"k"`
	Val  []byte `msgpack:"v,omitempty"`
	Del  bool   `msgpack:"d,omitempty"`
	// CAS: the entry must be present with version Ver (ExpOK) or absent.
	ExpOK  bool       `msgpack:"xo,omitempty"`
	ExpVer backup.Ver `msgpack:"xv"`
	// Owner is the lock owner the write acts for: it passes that
	// owner's locks of the key.
	Owner string `msgpack:"lo,omitempty"`
	// TTL (nanoseconds) replaces the map's time to live when TTLSet
	// (0: never expires); the owner turns it into a deadline.
	TTL    int64 `msgpack:"t,omitempty"`
	TTLSet bool  `msgpack:"ts,omitempty"`
}

type opAns struct {
	Code  int        `msgpack:"c"`
	Msg   string     `msgpack:"x,omitempty"`
	Old   []byte     `msgpack:"o,omitempty"`
	Had   bool       `msgpack:"h,omitempty"`
	Wrote bool       `msgpack:"w,omitempty"`
	Ver   backup.Ver `msgpack:"r"` // version of the entry now (or read)
}

type scanReq struct {
	Map   string `msgpack:"m"`
	Parts []int  `msgpack:"p"`
}

type scanAns struct {
	Code    int            `msgpack:"c"`
	Entries []backup.Entry `msgpack:"e"`
	Moved   []int          `msgpack:"mv,omitempty"` // partitions the callee does not own
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
	Bytes int64 `msgpack:"b,omitempty"` // key and value bytes of those entries
	Moved []int `msgpack:"mv,omitempty"`
}
