package filestore

import (
	"errors"
	"fmt"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/record"
)

// Frame types (the record package's type byte). Frozen.
const (
	typeMeta       = 'M' // META file: metaInfo
	typeLogHeader  = 'H' // first frame of a log file: fileHeader
	typePut        = 'P' // a put: partition, epoch, seq, key, value
	typeDelete     = 'D' // a delete: partition, epoch, seq, key
	typeEpoch      = 'E' // epoch start: partition, epoch, seq it took over from
	typeSnapHeader = 'S' // first frame of a snapshot: fileHeader + partition, epoch, seq
	typeSnapChunk  = 'C' // a run of snapshot entries
	typeSnapEnd    = 'T' // last frame of a snapshot: entry count

	// Added with entry expiry (FORMAT.md, "Expiry"): written only for
	// entries that have a deadline, so a store without them writes the
	// same bytes as before and every older file reads unchanged.
	typePutExp     = 'X' // a put with a deadline: partition, epoch, seq, key, expires, value
	typeSnapChunkX = 'K' // a run of snapshot entries with deadlines

	// Added with the pipelined commit (FORMAT.md, "Links"): written only
	// into a batch file started while an earlier batch of one of its
	// partitions was still in flight.
	typeLink = 'L' // per partition: partition, file-number distance, epoch, seq
)

// FormatVersion is the version of the map directory layout and payloads.
const FormatVersion = 1

var errPayload = errors.New("stowage/mapstore/filestore: malformed record payload")

// fileHeader starts every log and snapshot file.
type fileHeader struct {
	Format     uint64
	Partitions uint64
	Gen        uint64
	Run        string
}

func encodeHeader(b []byte, h fileHeader) []byte {
	b = record.AppendUvarint(b, h.Format)
	b = record.AppendUvarint(b, h.Partitions)
	b = record.AppendUvarint(b, h.Gen)
	return record.AppendBytes(b, []byte(h.Run))
}

// decodeHeader reads a fileHeader; r.Err says whether it was well formed.
func decodeHeader(r *record.Reader) fileHeader {
	h := fileHeader{Format: r.Uvarint(), Partitions: r.Uvarint(), Gen: r.Uvarint()}
	h.Run = string(r.Bytes())
	return h
}

// payloadErr returns errPayload if r failed.
func payloadErr(r *record.Reader) error {
	if r.Err() != nil {
		return errPayload
	}
	return nil
}

// appendRecord frames one log record onto dst.
func appendRecord(dst []byte, r *mapstore.Record) []byte {
	typ := byte(typePut)
	switch {
	case r.Deleted:
		typ = typeDelete
	case r.Expires != 0:
		typ = typePutExp
	}
	start := len(dst)
	p := record.BeginFrame(dst, typ)
	p = record.AppendUvarint(p, uint64(r.Partition))
	p = record.AppendUvarint(p, r.Version.Epoch)
	p = record.AppendUvarint(p, r.Version.Seq)
	p = record.AppendBytes(p, r.Key)
	switch typ {
	case typePutExp:
		p = record.AppendUvarint(p, uint64(r.Expires))
		p = append(p, r.Value...)
	case typePut:
		p = append(p, r.Value...)
	}
	return record.EndFrame(p, start)
}

// recordSize is len(appendRecord(nil, r)), without making the record.
func recordSize(r *mapstore.Record) int {
	if r.Deleted {
		return recordSizeOf(r.Partition, r.Version, len(r.Key), -1, 0)
	}
	return recordSizeOf(r.Partition, r.Version, len(r.Key), len(r.Value), r.Expires)
}

// recordSizeOf is the framed size of a put of partition p at version v
// with a key and value of these lengths and deadline exp (a delete:
// valueLen < 0).
func recordSizeOf(p int, v mapstore.Version, keyLen, valueLen int, exp int64) int {
	n := record.HeaderSize + uvarintLen(uint64(p)) + uvarintLen(v.Epoch) + uvarintLen(v.Seq) + uvarintLen(uint64(keyLen)) + keyLen
	switch {
	case valueLen < 0:
	case exp != 0:
		n += uvarintLen(uint64(exp)) + valueLen
	default:
		n += valueLen
	}
	return n
}

// uvarintLen is the length of v as a uvarint.
func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// logEntry is one decoded log record; epoch starts have Epoch set and no
// key. A put with a deadline (typePutExp) decodes as typePut with exp set.
type logEntry struct {
	typ   byte
	part  int
	ver   mapstore.Version
	key   []byte
	value []byte
	exp   int64 // expiry deadline, Unix nanoseconds (0: none)
}

func decodeRecord(f record.Frame) (logEntry, error) {
	var e logEntry
	err := e.decode(f)
	return e, err
}

// decode sets e from a log record frame. Key and value alias the frame.
func (e *logEntry) decode(f record.Frame) error {
	r := record.NewReader(f.Payload)
	part, epoch, seq := r.Uvarint(), r.Uvarint(), r.Uvarint()
	if r.Err() != nil {
		return errPayload
	}
	e.typ, e.part, e.ver = f.Type, int(part), mapstore.Version{Epoch: epoch, Seq: seq}
	e.key, e.value, e.exp = nil, nil, 0
	switch f.Type {
	case typePut, typeDelete, typePutExp:
		e.key = r.Bytes()
		if f.Type == typePutExp {
			e.typ, e.exp = typePut, int64(r.Uvarint())
		}
		if r.Err() != nil {
			return errPayload
		}
		if e.typ == typePut {
			e.value = r.Rest()
			if e.value == nil {
				e.value = []byte{}
			}
		}
	case typeEpoch:
	default:
		return fmt.Errorf("%w: frame type %q", errPayload, f.Type)
	}
	return nil
}

func encodeEpoch(p int, v mapstore.Version) []byte {
	b := record.AppendUvarint(nil, uint64(p))
	b = record.AppendUvarint(b, v.Epoch)
	return record.AppendUvarint(b, v.Seq)
}

// link ties a batch file's records of one partition to the batch of that
// partition written before it, which was still in flight when this one
// was started: back is how many file numbers earlier (in the same run)
// that batch is, ver the highest version of the partition it holds.
type link struct {
	part int
	back uint64
	ver  mapstore.Version
}

func encodeLinks(b []byte, links []link) []byte {
	for _, l := range links {
		b = record.AppendUvarint(b, uint64(l.part))
		b = record.AppendUvarint(b, l.back)
		b = record.AppendUvarint(b, l.ver.Epoch)
		b = record.AppendUvarint(b, l.ver.Seq)
	}
	return b
}

// decodeLinks reads an L frame's payload.
func decodeLinks(payload []byte) ([]link, error) {
	r := record.NewReader(payload)
	var out []link
	for r.Len() > 0 {
		l := link{part: int(r.Uvarint()), back: r.Uvarint()}
		l.ver.Epoch, l.ver.Seq = r.Uvarint(), r.Uvarint()
		if r.Err() != nil || l.back == 0 {
			return nil, errPayload
		}
		out = append(out, l)
	}
	return out, nil
}
