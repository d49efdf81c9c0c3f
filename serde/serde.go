package serde

import (
	"fmt"
	"reflect"

	"github.com/vmihailenco/msgpack/v5"
)

// Codec encodes and decodes values of one type. Implementations are safe
// for concurrent use. Encode returns a new slice the caller owns; Decode
// must not keep b.
type Codec[T any] interface {
	Encode(v T) ([]byte, error)
	Decode(b []byte) (T, error)
}

type msgpackCodec[T any] struct{ maps bool }

// Msgpack returns a codec for any type msgpack can represent. Types that
// hold maps are encoded canonically (map entries sorted by their encoded
// keys), so that equal values encode equally.
func Msgpack[T any]() Codec[T] {
	return msgpackCodec[T]{maps: holdsMap(reflect.TypeFor[T](), map[reflect.Type]bool{})}
}

// holdsMap reports whether values of t may contain a map.
func holdsMap(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Map, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return holdsMap(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			if holdsMap(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

func (c msgpackCodec[T]) Encode(v T) ([]byte, error) {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("stowage/serde: msgpack encode %T: %w", v, err)
	}
	if !c.maps {
		return b, nil
	}
	out, rest, err := canonical(b, make([]byte, 0, len(b)), 0)
	if err == nil && len(rest) != 0 {
		err = fmt.Errorf("%d trailing bytes", len(rest))
	}
	if err != nil {
		return nil, fmt.Errorf("stowage/serde: msgpack canonicalize %T: %w", v, err)
	}
	return out, nil
}

func (msgpackCodec[T]) Decode(b []byte) (T, error) {
	var v T
	if err := msgpack.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("stowage/serde: msgpack decode %T: %w", v, err)
	}
	return v, nil
}

// Named is a codec with a stable name, recorded with a persisted map's
// data (see NameOf). A codec whose encoding changes should change its
// name.
type Named interface {
	CodecName() string
}

// NameOf is the name of codec c: its CodecName when it is Named, else
// its Go type ("%T"), which names a codec type but not its settings.
func NameOf(c any) string {
	if n, ok := c.(Named); ok {
		return n.CodecName()
	}
	return fmt.Sprintf("%T", c)
}

// CodecName is "msgpack:" and the Go type encoded.
func (c msgpackCodec[T]) CodecName() string { return "msgpack:" + reflect.TypeFor[T]().String() }

// CodecName is "string".
func (stringCodec) CodecName() string { return "string" }

// CodecName is "bytes".
func (bytesCodec) CodecName() string { return "bytes" }

type stringCodec struct{}

// String returns the codec of strings as their raw UTF-8 bytes (the HTTP
// API's keys).
func String() Codec[string] { return stringCodec{} }

func (stringCodec) Encode(v string) ([]byte, error) { return []byte(v), nil }
func (stringCodec) Decode(b []byte) (string, error) { return string(b), nil }

type bytesCodec struct{}

// Bytes returns the codec of byte slices as themselves. Both directions
// copy, and never return nil: an empty value stays an empty, non-nil slice,
// so that it cannot be taken for a deleted entry (whose value is nil).
func Bytes() Codec[[]byte] { return bytesCodec{} }

func (bytesCodec) Encode(v []byte) ([]byte, error) { return clone(v), nil }
func (bytesCodec) Decode(b []byte) ([]byte, error) { return clone(b), nil }

func clone(b []byte) []byte {
	c := make([]byte, len(b))
	copy(c, b)
	return c
}
