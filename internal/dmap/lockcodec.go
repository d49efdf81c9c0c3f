package dmap

import (
	"encoding/binary"
	"errors"
)

// The encoding of a lock request and of a lock entry: two signed varints
// and three strings, each a uvarint length and its bytes. It is smaller and
// much cheaper than the member protocol's msgpack, and lock entries are
// never persisted, so it may change between releases.

var errLockCodec = errors.New("stowage: malformed lock record")

// maxLockString bounds a decoded owner or member id.
const maxLockString = 1 << 12

func appendLockFields(b []byte, a, c int64, ss ...string) []byte {
	b = binary.AppendVarint(b, a)
	b = binary.AppendVarint(b, c)
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

func lockFields(b []byte) (a, c int64, s, t, u string, err error) {
	var n int
	if a, n = binary.Varint(b); n <= 0 {
		return 0, 0, "", "", "", errLockCodec
	}
	b = b[n:]
	if c, n = binary.Varint(b); n <= 0 {
		return 0, 0, "", "", "", errLockCodec
	}
	b = b[n:]
	for _, p := range []*string{&s, &t, &u} {
		if *p, b, err = lockString(b); err != nil {
			return 0, 0, "", "", "", err
		}
	}
	if len(b) != 0 {
		return 0, 0, "", "", "", errLockCodec
	}
	return a, c, s, t, u, nil
}

func lockString(b []byte) (string, []byte, error) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > maxLockString || uint64(len(b)-n) < l {
		return "", nil, errLockCodec
	}
	b = b[n:]
	return string(b[:l]), b[l:], nil
}
