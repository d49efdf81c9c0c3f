// Package mpack appends msgpack values to byte slices and reads them
// back without reflection, for the written-out codecs of the member
// protocol's hot messages.
//
// The appenders make the bytes github.com/vmihailenco/msgpack/v5 makes
// by reflection with its default options: a struct is a map of its
// field names, an int field the smallest integer that holds it, a uint64
// or int64 field always 9 bytes, a nil []byte nil. The Reader takes
// every encoding that decoder takes for the same Go types (any integer
// width, str or bin for bytes and strings, nil for an empty value), so
// members that decode by reflection and those that use this read each
// other's messages alike.
package mpack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// msgpack type codes used here.
const (
	codeNil      = 0xc0
	codeFalse    = 0xc2
	codeTrue     = 0xc3
	codeBin8     = 0xc4
	codeBin16    = 0xc5
	codeBin32    = 0xc6
	codeExt8     = 0xc7
	codeExt16    = 0xc8
	codeExt32    = 0xc9
	codeFloat32  = 0xca
	codeFloat64  = 0xcb
	codeUint8    = 0xcc
	codeUint16   = 0xcd
	codeUint32   = 0xce
	codeUint64   = 0xcf
	codeInt8     = 0xd0
	codeInt16    = 0xd1
	codeInt32    = 0xd2
	codeInt64    = 0xd3
	codeFixExt1  = 0xd4
	codeFixExt16 = 0xd8
	codeStr8     = 0xd9
	codeStr16    = 0xda
	codeStr32    = 0xdb
	codeArray16  = 0xdc
	codeArray32  = 0xdd
	codeMap16    = 0xde
	codeMap32    = 0xdf
)

// AppendMapLen appends the header of a map of n pairs.
func AppendMapLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x80|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeMap16), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(b, codeMap32), uint32(n))
}

// AppendString appends s as a msgpack str.
func AppendString(b []byte, s string) []byte {
	n := len(s)
	switch {
	case n < 32:
		b = append(b, 0xa0|byte(n))
	case n < 256:
		b = append(b, codeStr8, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, codeStr16), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, codeStr32), uint32(n))
	}
	return append(b, s...)
}

// AppendBytes appends p as a msgpack bin, nil as nil.
func AppendBytes(b []byte, p []byte) []byte {
	if p == nil {
		return append(b, codeNil)
	}
	n := len(p)
	switch {
	case n < 256:
		b = append(b, codeBin8, byte(n))
	case n <= math.MaxUint16:
		b = binary.BigEndian.AppendUint16(append(b, codeBin16), uint16(n))
	default:
		b = binary.BigEndian.AppendUint32(append(b, codeBin32), uint32(n))
	}
	return append(b, p...)
}

// AppendBool appends v.
func AppendBool(b []byte, v bool) []byte {
	if v {
		return append(b, codeTrue)
	}
	return append(b, codeFalse)
}

// AppendInt appends n in as few bytes as hold it, as an int field is.
func AppendInt(b []byte, n int64) []byte {
	if n >= 0 {
		return appendUint(b, uint64(n))
	}
	switch {
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, codeInt8, byte(n))
	case n >= math.MinInt16:
		return binary.BigEndian.AppendUint16(append(b, codeInt16), uint16(n))
	case n >= math.MinInt32:
		return binary.BigEndian.AppendUint32(append(b, codeInt32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, codeInt64), uint64(n))
}

func appendUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, codeUint8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, codeUint16), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, codeUint32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, codeUint64), n)
}

// AppendUint64 appends n in 9 bytes, as a uint64 field is.
func AppendUint64(b []byte, n uint64) []byte {
	return binary.BigEndian.AppendUint64(append(b, codeUint64), n)
}

// AppendInt64 appends n in 9 bytes, as an int64 field is.
func AppendInt64(b []byte, n int64) []byte {
	return binary.BigEndian.AppendUint64(append(b, codeInt64), uint64(n))
}

// ErrMalformed: the bytes are not the msgpack value expected.
var ErrMalformed = errors.New("malformed msgpack")

// Reader reads msgpack values from a byte slice, in order. The first
// error sticks: every later read returns it too.
type Reader struct {
	b   []byte
	err error
}

// NewReader reads b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is the first error a read met.
func (r *Reader) Err() error { return r.err }

func (r *Reader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)
	}
}

// code takes the next type code; false (with the error set) at the end.
func (r *Reader) code() (byte, bool) {
	if r.err != nil {
		return 0, false
	}
	if len(r.b) == 0 {
		r.fail("unexpected end")
		return 0, false
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c, true
}

// take takes the next n bytes (aliasing the input).
func (r *Reader) take(n int) ([]byte, bool) {
	if r.err != nil {
		return nil, false
	}
	if n < 0 || n > len(r.b) {
		r.fail("%d bytes wanted, %d left", n, len(r.b))
		return nil, false
	}
	p := r.b[:n:n]
	r.b = r.b[n:]
	return p, true
}

// size reads a big-endian length of k bytes.
func (r *Reader) size(k int) int {
	p, ok := r.take(k)
	if !ok {
		return 0
	}
	switch k {
	case 1:
		return int(p[0])
	case 2:
		return int(binary.BigEndian.Uint16(p))
	}
	return int(binary.BigEndian.Uint32(p))
}

// MapLen reads a map header: its number of pairs, -1 for nil.
func (r *Reader) MapLen() int {
	c, ok := r.code()
	if !ok {
		return 0
	}
	switch {
	case c == codeNil:
		return -1
	case c >= 0x80 && c <= 0x8f:
		return int(c & 0x0f)
	case c == codeMap16:
		return r.size(2)
	case c == codeMap32:
		return r.size(4)
	}
	r.fail("code %#x where a map was expected", c)
	return 0
}

// rawLen reads the header of a str or bin: its length, -1 for nil.
func (r *Reader) rawLen(what string) int {
	c, ok := r.code()
	if !ok {
		return 0
	}
	switch {
	case c == codeNil:
		return -1
	case c >= 0xa0 && c <= 0xbf:
		return int(c & 0x1f)
	case c == codeStr8, c == codeBin8:
		return r.size(1)
	case c == codeStr16, c == codeBin16:
		return r.size(2)
	case c == codeStr32, c == codeBin32:
		return r.size(4)
	}
	r.fail("code %#x where %s was expected", c, what)
	return 0
}

// String reads a string ("" for nil).
func (r *Reader) String() string {
	n := r.rawLen("a string")
	if n <= 0 {
		return ""
	}
	p, _ := r.take(n)
	return string(p)
}

// Key reads a map key without copying it: valid until the input is
// changed.
func (r *Reader) Key() []byte {
	n := r.rawLen("a key")
	if n <= 0 {
		return nil
	}
	p, _ := r.take(n)
	return p
}

// Bytes reads a byte string, copied (nil for nil, empty for empty).
func (r *Reader) Bytes() []byte {
	n := r.rawLen("bytes")
	if n < 0 || r.err != nil {
		return nil
	}
	p, ok := r.take(n)
	if !ok {
		return nil
	}
	return append(make([]byte, 0, n), p...)
}

// Bool reads a bool (false for nil).
func (r *Reader) Bool() bool {
	c, ok := r.code()
	switch {
	case !ok:
		return false
	case c == codeTrue:
		return true
	case c == codeFalse, c == codeNil:
		return false
	}
	r.fail("code %#x where a bool was expected", c)
	return false
}

// Int reads an integer of any width (0 for nil).
func (r *Reader) Int() int64 { return int64(r.number()) }

// Uint64 reads an integer of any width (0 for nil), as uint64 bits.
func (r *Reader) Uint64() uint64 { return r.number() }

func (r *Reader) number() uint64 {
	c, ok := r.code()
	if !ok {
		return 0
	}
	switch {
	case c <= 0x7f:
		return uint64(c)
	case c >= 0xe0:
		return uint64(int64(int8(c)))
	case c == codeNil:
		return 0
	}
	var k int
	switch c {
	case codeUint8, codeInt8:
		k = 1
	case codeUint16, codeInt16:
		k = 2
	case codeUint32, codeInt32:
		k = 4
	case codeUint64, codeInt64:
		k = 8
	default:
		r.fail("code %#x where an integer was expected", c)
		return 0
	}
	p, ok := r.take(k)
	if !ok {
		return 0
	}
	switch c {
	case codeUint8:
		return uint64(p[0])
	case codeInt8:
		return uint64(int64(int8(p[0])))
	case codeUint16:
		return uint64(binary.BigEndian.Uint16(p))
	case codeInt16:
		return uint64(int64(int16(binary.BigEndian.Uint16(p))))
	case codeUint32:
		return uint64(binary.BigEndian.Uint32(p))
	case codeInt32:
		return uint64(int64(int32(binary.BigEndian.Uint32(p))))
	}
	return binary.BigEndian.Uint64(p)
}

// maxDepth bounds the nesting of a skipped value.
const maxDepth = 32

// Skip skips one value of any type.
func (r *Reader) Skip() { r.skip(0) }

func (r *Reader) skip(depth int) {
	if depth > maxDepth {
		r.fail("nested over %d deep", maxDepth)
		return
	}
	c, ok := r.code()
	if !ok {
		return
	}
	items := 0 // values that follow, for an array or map
	switch {
	case c <= 0x7f, c >= 0xe0, c == codeNil, c == codeFalse, c == codeTrue:
	case c >= 0x80 && c <= 0x8f:
		items = 2 * int(c&0x0f)
	case c >= 0x90 && c <= 0x9f:
		items = int(c & 0x0f)
	case c >= 0xa0 && c <= 0xbf:
		r.take(int(c & 0x1f))
	case c == codeStr8, c == codeBin8:
		r.take(r.size(1))
	case c == codeStr16, c == codeBin16:
		r.take(r.size(2))
	case c == codeStr32, c == codeBin32:
		r.take(r.size(4))
	case c == codeExt8:
		r.take(r.size(1) + 1)
	case c == codeExt16:
		r.take(r.size(2) + 1)
	case c == codeExt32:
		r.take(r.size(4) + 1)
	case c >= codeFixExt1 && c <= codeFixExt16:
		r.take(1<<(c-codeFixExt1) + 1)
	case c == codeFloat32, c == codeUint32, c == codeInt32:
		r.take(4)
	case c == codeFloat64, c == codeUint64, c == codeInt64:
		r.take(8)
	case c == codeUint8, c == codeInt8:
		r.take(1)
	case c == codeUint16, c == codeInt16:
		r.take(2)
	case c == codeArray16:
		items = r.size(2)
	case c == codeArray32:
		items = r.size(4)
	case c == codeMap16:
		items = 2 * r.size(2)
	case c == codeMap32:
		items = 2 * r.size(4)
	default:
		r.fail("unknown code %#x", c)
	}
	if items > len(r.b) { // each value takes at least a byte
		r.fail("%d values announced, %d bytes left", items, len(r.b))
		return
	}
	for range items {
		if r.err != nil {
			return
		}
		r.skip(depth + 1)
	}
}

// Fields calls field with each key of a map (nil: no keys); field reads
// the key's value, or skips it when it does not know the key (a switch
// on string(key) copies nothing). It returns the first error.
func (r *Reader) Fields(field func(key []byte)) error {
	n := r.MapLen()
	if n > len(r.b) {
		r.fail("%d pairs announced, %d bytes left", n, len(r.b))
	}
	for range max(n, 0) {
		if r.err != nil {
			break
		}
		field(r.Key())
	}
	return r.err
}
