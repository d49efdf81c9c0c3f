// Package serde turns typed keys and values into bytes and back, through a
// Codec[T].
//
// Keys must encode deterministically: equal keys must give equal bytes on
// every encode, in every process, because a key's partition is a hash of
// its encoding and the map and its store compare keys by their encodings.
// A key type whose encoding depended on map iteration order would land in
// a random partition and never be found again.
//
// Msgpack[T] (github.com/vmihailenco/msgpack/v5) is deterministic for any
// type: when T can hold a map, the encoded bytes are rewritten so that the
// entries of every map, at any depth, are ordered by their encoded keys.
// The rewrite works on the msgpack bytes themselves, so each value keeps
// its exact encoding (int widths, times, ext types, keys of any type);
// msgpack's own SetSortMapKeys covers only a few map types. Types that
// cannot hold a map are encoded directly. Payloads of custom ext types are
// opaque to the rewrite: such a type must encode deterministically itself.
// Values need not be deterministic, but they get the same encoding.
//
// String and Bytes are the fast codecs of the common raw key and value
// types: the bytes are the value itself, with no msgpack framing. Both
// copy, and an empty value encodes and decodes as an empty, non-nil slice.
//
// Every codec here is safe for concurrent use. Encode returns a slice the
// caller owns; Decode does not keep its argument.
//
// Record framing (magic, version, length, CRC-32C) lives in serde/record.
package serde
