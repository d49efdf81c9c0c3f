package filestore

import (
	"encoding/binary"
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

func appendUvarint(b []byte, v uint64) []byte { return binary.AppendUvarint(b, v) }

func appendBytes(b, p []byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(p)))
	return append(b, p...)
}

type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errPayload
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errPayload
		return nil
	}
	p := d.b[:n:n]
	d.b = d.b[n:]
	return p
}

func encodeHeader(b []byte, h fileHeader) []byte {
	b = appendUvarint(b, h.Format)
	b = appendUvarint(b, h.Partitions)
	b = appendUvarint(b, h.Gen)
	return appendBytes(b, []byte(h.Run))
}

func decodeHeader(d *decoder) fileHeader {
	h := fileHeader{Format: d.uvarint(), Partitions: d.uvarint(), Gen: d.uvarint()}
	h.Run = string(d.bytes())
	return h
}

// appendRecord frames one log record onto dst.
func appendRecord(dst []byte, r *mapstore.Record, scratch []byte) ([]byte, []byte) {
	p := scratch[:0]
	p = appendUvarint(p, uint64(r.Partition))
	p = appendUvarint(p, r.Version.Epoch)
	p = appendUvarint(p, r.Version.Seq)
	p = appendBytes(p, r.Key)
	typ := byte(typePut)
	if r.Deleted {
		typ = typeDelete
	} else {
		p = append(p, r.Value...)
	}
	return record.Append(dst, typ, p), p
}

// logEntry is one decoded log record; epoch starts have Epoch set and no key.
type logEntry struct {
	typ   byte
	part  int
	ver   mapstore.Version
	key   []byte
	value []byte
}

func decodeRecord(f record.Frame) (logEntry, error) {
	var e logEntry
	err := e.decode(f)
	return e, err
}

// decode sets e from a log record frame. Key and value alias the frame.
func (e *logEntry) decode(f record.Frame) error {
	b := f.Payload
	var v [3]uint64
	for i := range v {
		x, n := binary.Uvarint(b)
		if n <= 0 {
			return errPayload
		}
		v[i], b = x, b[n:]
	}
	e.typ, e.part, e.ver = f.Type, int(v[0]), mapstore.Version{Epoch: v[1], Seq: v[2]}
	e.key, e.value = nil, nil
	switch f.Type {
	case typePut, typeDelete:
		n, m := binary.Uvarint(b)
		if m <= 0 || n > uint64(len(b)-m) {
			return errPayload
		}
		end := m + int(n)
		e.key = b[m:end:end]
		if f.Type == typePut {
			e.value = b[end:]
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
	b := appendUvarint(nil, uint64(p))
	b = appendUvarint(b, v.Epoch)
	return appendUvarint(b, v.Seq)
}
