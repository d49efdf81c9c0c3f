// Package serde turns typed keys and values into bytes and back.
//
// Keys must encode deterministically: equal keys must give equal bytes,
// since a key's partition is a hash of its encoding and lookups compare
// encodings. The msgpack codec therefore sorts map keys. Values need not
// be deterministic.
//
// Record framing (magic, version, length, CRC-32C) lives in serde/record.
package serde
