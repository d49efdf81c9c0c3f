package serde

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// maxDepth bounds the nesting canonical follows.
const maxDepth = 10000

var errTruncated = errors.New("truncated msgpack")

// canonical appends to out the msgpack value at the start of b with the
// entries of every map, at any depth, ordered by their encoded keys, and
// returns the bytes after the value. It works on the encoding itself, so
// every value keeps its exact bytes (ext types, times, ints of each width,
// keys of any type, even unhashable ones) and only map order changes.
// Ext payloads are opaque and left as they are.
func canonical(b, out []byte, depth int) ([]byte, []byte, error) {
	if depth > maxDepth {
		return nil, nil, fmt.Errorf("nesting deeper than %d", maxDepth)
	}
	if len(b) == 0 {
		return nil, nil, errTruncated
	}
	c := b[0]
	var hdr, n int // header size; elements (arrays) or entries (maps)
	switch {
	case c <= 0x7f, c >= 0xe0, c == 0xc0, c == 0xc2, c == 0xc3:
		return scalar(b, out, 1)
	case c >= 0x80 && c <= 0x8f:
		return mapValue(b, out, 1, int(c&0x0f), depth)
	case c >= 0x90 && c <= 0x9f:
		hdr, n = 1, int(c&0x0f)
	case c >= 0xa0 && c <= 0xbf:
		return scalar(b, out, 1+int(c&0x1f))
	}
	switch c {
	case 0xc4, 0xd9: // bin8, str8
		return sized(b, out, 1, 0)
	case 0xc5, 0xda:
		return sized(b, out, 2, 0)
	case 0xc6, 0xdb:
		return sized(b, out, 4, 0)
	case 0xc7: // ext8, ext16, ext32: length, type, data
		return sized(b, out, 1, 1)
	case 0xc8:
		return sized(b, out, 2, 1)
	case 0xc9:
		return sized(b, out, 4, 1)
	case 0xca, 0xce, 0xd2:
		return scalar(b, out, 5)
	case 0xcb, 0xcf, 0xd3:
		return scalar(b, out, 9)
	case 0xcc, 0xd0:
		return scalar(b, out, 2)
	case 0xcd, 0xd1:
		return scalar(b, out, 3)
	case 0xd4, 0xd5, 0xd6, 0xd7, 0xd8: // fixext 1, 2, 4, 8, 16
		return scalar(b, out, 2+1<<(c-0xd4))
	case 0xdc, 0xde:
		if len(b) < 3 {
			return nil, nil, errTruncated
		}
		hdr, n = 3, int(binary.BigEndian.Uint16(b[1:]))
	case 0xdd, 0xdf:
		if len(b) < 5 {
			return nil, nil, errTruncated
		}
		hdr, n = 5, int(binary.BigEndian.Uint32(b[1:]))
	}
	switch c {
	case 0xde, 0xdf:
		return mapValue(b, out, hdr, n, depth)
	}
	if hdr == 0 {
		return nil, nil, fmt.Errorf("invalid msgpack code 0x%02x", c)
	}
	// An array: its elements in order, each canonical.
	out = append(out, b[:hdr]...)
	rest := b[hdr:]
	var err error
	for i := 0; i < n; i++ {
		if out, rest, err = canonical(rest, out, depth+1); err != nil {
			return nil, nil, err
		}
	}
	return out, rest, nil
}

// scalar copies a value of n bytes.
func scalar(b, out []byte, n int) ([]byte, []byte, error) {
	if len(b) < n {
		return nil, nil, errTruncated
	}
	return append(out, b[:n]...), b[n:], nil
}

// sized copies a value whose length field of lenSize bytes follows the
// code, then extra bytes (the ext type), then the data.
func sized(b, out []byte, lenSize, extra int) ([]byte, []byte, error) {
	if len(b) < 1+lenSize {
		return nil, nil, errTruncated
	}
	var n uint64
	for _, x := range b[1 : 1+lenSize] {
		n = n<<8 | uint64(x)
	}
	total := uint64(1+lenSize+extra) + n
	if total > uint64(len(b)) {
		return nil, nil, errTruncated
	}
	return scalar(b, out, int(total))
}

// mapValue writes the map whose header of hdr bytes holds n entries, its
// entries sorted by canonical key bytes.
func mapValue(b, out []byte, hdr, n int, depth int) ([]byte, []byte, error) {
	if len(b) < hdr {
		return nil, nil, errTruncated
	}
	type entry struct{ k, v []byte }
	entries := make([]entry, 0, min(n, len(b)))
	rest := b[hdr:]
	var k, v []byte
	var err error
	for i := 0; i < n; i++ {
		if k, rest, err = canonical(rest, nil, depth+1); err != nil {
			return nil, nil, err
		}
		if v, rest, err = canonical(rest, nil, depth+1); err != nil {
			return nil, nil, err
		}
		entries = append(entries, entry{k, v})
	}
	sort.SliceStable(entries, func(i, j int) bool { return bytes.Compare(entries[i].k, entries[j].k) < 0 })
	out = append(out, b[:hdr]...)
	for _, e := range entries {
		out = append(append(out, e.k...), e.v...)
	}
	return out, rest, nil
}
