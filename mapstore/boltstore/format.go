package boltstore

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/stowage/stowage/mapstore"
)

// The layout inside the file (see the package doc). Frozen: a change
// needs a new formatVersion and a reader for the old one.
const (
	formatVersion = 1
	metaKey       = "format"   // 6 bytes: never the 4-byte name of a partition bucket
	versionsKey   = "versions" // sub-bucket of each partition's highest version
	codecKey      = "codec"    // the name of the map's codecs (mapstore.CodecRecorder)
	maxHeader     = 1 + 3*binary.MaxVarintLen64
	// valueExpires marks a stored value with a deadline: epoch, seq,
	// then the deadline (Unix nanoseconds), then the value bytes. It is
	// written only for entries that have one, so values without stay as
	// formatVersion wrote them and old files read unchanged.
	valueExpires = 2
)

// errHeader reports a value whose header cannot be read.
var errHeader = errors.New("malformed value header")

// partBucket names the sub-bucket of partition p.
func partBucket(p int) []byte { return binary.BigEndian.AppendUint32(make([]byte, 0, 4), uint32(p)) }

// encodeMeta is the map bucket's format record: format version, partition
// count, hash id.
func encodeMeta(partitions int, hashID string) []byte {
	b := append(make([]byte, 0, 1+binary.MaxVarintLen64+len(hashID)), formatVersion)
	b = binary.AppendUvarint(b, uint64(partitions))
	return append(b, hashID...)
}

func decodeMeta(b []byte) (partitions int, hashID string, err error) {
	if len(b) < 2 || b[0] != formatVersion {
		return 0, "", fmt.Errorf("unknown format record %x", b)
	}
	n, w := binary.Uvarint(b[1:])
	if w <= 0 || n == 0 || n > 1<<31 {
		return 0, "", fmt.Errorf("bad partition count in format record %x", b)
	}
	return int(n), string(b[1+w:]), nil
}

// encodeValue is one entry's stored value: format version, uvarint epoch,
// uvarint seq, then the value bytes; an entry with a deadline (expires,
// Unix nanoseconds) has valueExpires for a version and the deadline as a
// uvarint after the seq.
func encodeValue(v mapstore.Version, value []byte, expires int64) []byte {
	tag := byte(formatVersion)
	if expires != 0 {
		tag = valueExpires
	}
	b := append(make([]byte, 0, maxHeader+len(value)), tag)
	b = binary.AppendUvarint(b, v.Epoch)
	b = binary.AppendUvarint(b, v.Seq)
	if expires != 0 {
		b = binary.AppendUvarint(b, uint64(expires))
	}
	return append(b, value...)
}

// encodeVersion is a partition's highest version in the versions bucket.
func encodeVersion(v mapstore.Version) []byte {
	b := binary.AppendUvarint(make([]byte, 0, 2*binary.MaxVarintLen64), v.Epoch)
	return binary.AppendUvarint(b, v.Seq)
}

// decodeVersion reads encodeVersion's bytes; damage reads as the zero
// version, which the next write or epoch start replaces.
func decodeVersion(b []byte) mapstore.Version {
	e, n := binary.Uvarint(b)
	if n <= 0 {
		return mapstore.Version{}
	}
	s, m := binary.Uvarint(b[n:])
	if m <= 0 {
		return mapstore.Version{}
	}
	return mapstore.Version{Epoch: e, Seq: s}
}

// decodeHeader returns the version of a stored value and where its bytes
// start.
func decodeHeader(b []byte) (mapstore.Version, int, error) {
	v, _, off, err := decodeEntry(b)
	return v, off, err
}

// decodeEntry returns the version and deadline (0: none) of a stored
// value and where its bytes start.
func decodeEntry(b []byte) (mapstore.Version, int64, int, error) {
	if len(b) < 3 || b[0] != formatVersion && b[0] != valueExpires {
		return mapstore.Version{}, 0, 0, errHeader
	}
	e, n := binary.Uvarint(b[1:])
	if n <= 0 {
		return mapstore.Version{}, 0, 0, errHeader
	}
	s, m := binary.Uvarint(b[1+n:])
	if m <= 0 {
		return mapstore.Version{}, 0, 0, errHeader
	}
	off := 1 + n + m
	var exp uint64
	if b[0] == valueExpires {
		var x int
		if exp, x = binary.Uvarint(b[off:]); x <= 0 {
			return mapstore.Version{}, 0, 0, errHeader
		}
		off += x
	}
	return mapstore.Version{Epoch: e, Seq: s}, int64(exp), off, nil
}

// arenaSize is the size of the blocks that keys and values read in bulk
// are copied into: one allocation per block instead of two per entry,
// while a caller keeping a single entry keeps at most one block alive.
const arenaSize = 64 << 10

// arena hands out copies carved from shared blocks. Each copy has its
// capacity cut to its length, so an append by the caller reallocates
// instead of running into a neighbour.
type arena struct{ buf []byte }

func (a *arena) copy(b []byte) []byte {
	if len(b) > arenaSize/8 {
		return append(make([]byte, 0, len(b)), b...)
	}
	if cap(a.buf)-len(a.buf) < len(b) {
		a.buf = make([]byte, 0, arenaSize)
	}
	n := len(a.buf)
	a.buf = append(a.buf, b...)
	return a.buf[n:len(a.buf):len(a.buf)]
}

// keyString shows a key in an error, cut short if long.
func keyString(k []byte) string {
	if len(k) > 64 {
		return fmt.Sprintf("%q... (%d bytes)", k[:64], len(k))
	}
	return fmt.Sprintf("%q", k)
}
