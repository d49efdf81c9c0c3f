// Package serde turns typed keys and values into bytes and back.
//
// Keys must encode deterministically: equal keys must give equal bytes,
// since a key's partition is a hash of its encoding and lookups compare
// encodings. The msgpack codec therefore sorts map keys. Values need not
// be deterministic.
//
// Record framing (magic, version, length, CRC-32C) lives in serde/record.
package serde

import (
	"bytes"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Codec encodes and decodes values of one type. Implementations are safe
// for concurrent use. Encode returns a new slice the caller owns; Decode
// must not keep b.
type Codec[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(b []byte) (T, error)
}

type msgpackCodec[T any] struct{}

// Msgpack returns a codec for any type msgpack can represent, encoding
// map keys sorted so that equal values encode equally.
func Msgpack[T any]() Codec[T] { return msgpackCodec[T]{} }

func (msgpackCodec[T]) Encode(v T) ([]byte, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("stowage/serde: msgpack encode %T: %w", v, err)
	}
	return buf.Bytes(), nil
}

func (msgpackCodec[T]) Decode(b []byte) (T, error) {
	var v T
	if err := msgpack.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("stowage/serde: msgpack decode %T: %w", v, err)
	}
	return v, nil
}

type stringCodec struct{}

// String returns the codec of strings as their raw UTF-8 bytes (the HTTP
// API's keys).
func String() Codec[string] { return stringCodec{} }

func (stringCodec) Encode(v string) ([]byte, error) { return []byte(v), nil }
func (stringCodec) Decode(b []byte) (string, error) { return string(b), nil }

type bytesCodec struct{}

// Bytes returns the codec of byte slices as themselves; Decode copies.
func Bytes() Codec[[]byte] { return bytesCodec{} }

func (bytesCodec) Encode(v []byte) ([]byte, error) { return append([]byte(nil), v...), nil }
func (bytesCodec) Decode(b []byte) ([]byte, error) { return append([]byte(nil), b...), nil }
