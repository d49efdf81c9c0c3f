package record

import (
	"encoding/binary"
	"errors"
)

// ErrField means a payload field is malformed or runs past the end of the
// payload.
var ErrField = errors.New("stowage/record: malformed payload field")

// AppendUvarint appends v as a uvarint field.
func AppendUvarint(dst []byte, v uint64) []byte { return binary.AppendUvarint(dst, v) }

// AppendVarint appends v as a signed varint field.
func AppendVarint(dst []byte, v int64) []byte { return binary.AppendVarint(dst, v) }

// AppendUint32 appends v as a 4-byte little-endian field.
func AppendUint32(dst []byte, v uint32) []byte { return binary.LittleEndian.AppendUint32(dst, v) }

// AppendBytes appends p as a bytes field: its length as a uvarint, then p.
func AppendBytes(dst, p []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(p)))
	return append(dst, p...)
}

// Reader reads the fields of a payload in order. A read that finds a
// malformed field, or one running past the payload, fails the Reader: that
// read and every later one return zero values (nil for a slice), Len
// returns 0 and Err returns ErrField. A caller reads all its fields and
// then checks Err once. A Reader never reads outside the payload it was
// given; whether the payload must be used up is the caller's rule (see
// Len).
//
// Slices returned alias the payload and have no spare capacity. A Reader
// is not safe for concurrent use; the zero Reader has an empty payload.
type Reader struct {
	b      []byte // the unread bytes; nil once failed
	failed bool
}

// NewReader returns a Reader at the start of payload.
func NewReader(payload []byte) Reader { return Reader{b: payload} }

// Len returns the number of unread bytes, 0 once the Reader failed.
func (r *Reader) Len() int { return len(r.b) }

// Err returns ErrField if a read failed, else nil.
func (r *Reader) Err() error {
	if r.failed {
		return ErrField
	}
	return nil
}

// Uvarint reads a uvarint field. It accepts what encoding/binary's Uvarint
// accepts: at most MaxVarintLen64 bytes, whose value fits in 64 bits.
// (Small enough to be inlined: the map store reads millions of these.)
func (r *Reader) Uvarint() uint64 {
	var v uint64
	var shift uint
	for i, c := range r.b {
		if c < 0x80 || i == binary.MaxVarintLen64-1 {
			if i == binary.MaxVarintLen64-1 && c > 1 {
				break // more than 64 bits
			}
			r.b = r.b[i+1:]
			return v | uint64(c)<<shift
		}
		v |= uint64(c&0x7f) << shift
		shift += 7
	}
	r.b, r.failed = nil, true
	return 0
}

// Varint reads a signed varint field: a uvarint holding the zig-zag
// encoding, as encoding/binary's Varint reads it.
func (r *Reader) Varint() int64 {
	u := r.Uvarint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// Uint32 reads a 4-byte little-endian field.
func (r *Reader) Uint32() uint32 {
	if len(r.b) < 4 {
		r.b, r.failed = nil, true
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b)
	r.b = r.b[4:]
	return v
}

// Bytes reads a bytes field. An empty field is an empty, non-nil slice;
// nil means the Reader failed.
func (r *Reader) Bytes() []byte {
	n := r.Uvarint()
	if n > uint64(len(r.b)) {
		r.b, r.failed = nil, true
		return nil
	}
	p := r.b[:n:n] // nil if the length did not read
	r.b = r.b[n:]
	return p
}

// Rest reads the unread bytes, for a payload whose last field runs to its
// end. It returns nil once the Reader failed.
func (r *Reader) Rest() []byte {
	p := r.b
	r.b = r.b[len(r.b):]
	return p
}
