package serde

import (
	"bytes"
	"fmt"
	"reflect"
	"sort"

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
	var generic any
	if err := msgpack.Unmarshal(b, &generic); err != nil {
		return nil, fmt.Errorf("stowage/serde: msgpack canonicalize %T: %w", v, err)
	}
	var buf bytes.Buffer
	if err := canonical(msgpack.NewEncoder(&buf), generic); err != nil {
		return nil, fmt.Errorf("stowage/serde: msgpack canonicalize %T: %w", v, err)
	}
	return buf.Bytes(), nil
}

// canonical writes v with every map's entries ordered by encoded key.
func canonical(enc *msgpack.Encoder, v any) error {
	type kv struct {
		k []byte
		v any
	}
	var entries []kv
	add := func(k, val any) error {
		kb, err := msgpack.Marshal(k)
		entries = append(entries, kv{kb, val})
		return err
	}
	switch m := v.(type) {
	case map[string]any:
		for k, val := range m {
			if err := add(k, val); err != nil {
				return err
			}
		}
	case map[any]any:
		for k, val := range m {
			if err := add(k, val); err != nil {
				return err
			}
		}
	case []any:
		if err := enc.EncodeArrayLen(len(m)); err != nil {
			return err
		}
		for _, e := range m {
			if err := canonical(enc, e); err != nil {
				return err
			}
		}
		return nil
	default:
		return enc.Encode(v)
	}
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].k, entries[j].k) < 0 })
	if err := enc.EncodeMapLen(len(entries)); err != nil {
		return err
	}
	for _, e := range entries {
		if _, err := enc.Writer().Write(e.k); err != nil {
			return err
		}
		if err := canonical(enc, e.v); err != nil {
			return err
		}
	}
	return nil
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
