package mpack_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/stowage/stowage/internal/mpack"
	"github.com/vmihailenco/msgpack/v5"
)

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := msgpack.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// field wraps a value in a one-field struct, so that msgpack encodes it
// as it would a field of that type.
func field[T any](t *testing.T, v T) []byte {
	t.Helper()
	b := marshal(t, struct {
		F T `msgpack:"f"`
	}{v})
	return b[3:] // the map header and the key "f"
}

// TestAppendIsReflections: each appender makes the bytes msgpack's
// reflection makes of a field of the same type, at every width.
func TestAppendIsReflections(t *testing.T) {
	ints := []int64{0, 1, 127, 128, 255, 256, 65535, 65536, math.MaxUint32, math.MaxUint32 + 1, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64}
	for _, n := range ints {
		if got, want := mpack.AppendInt(nil, n), field(t, int(n)); !bytes.Equal(got, want) {
			t.Errorf("int %d: %x, reflection %x", n, got, want)
		}
		if got, want := mpack.AppendInt64(nil, n), field(t, n); !bytes.Equal(got, want) {
			t.Errorf("int64 %d: %x, reflection %x", n, got, want)
		}
		if got, want := mpack.AppendUint64(nil, uint64(n)), field(t, uint64(n)); !bytes.Equal(got, want) {
			t.Errorf("uint64 %d: %x, reflection %x", uint64(n), got, want)
		}
	}
	for _, n := range []int{0, 1, 31, 32, 255, 256, 65535, 65536} {
		s := strings.Repeat("s", n)
		if got, want := mpack.AppendString(nil, s), field(t, s); !bytes.Equal(got, want) {
			t.Errorf("string of %d: %x..., reflection %x...", n, got[:min(len(got), 6)], want[:min(len(want), 6)])
		}
		p := bytes.Repeat([]byte{9}, n)
		if got, want := mpack.AppendBytes(nil, p), field(t, p); !bytes.Equal(got, want) {
			t.Errorf("bytes of %d: %x..., reflection %x...", n, got[:min(len(got), 6)], want[:min(len(want), 6)])
		}
	}
	if got, want := mpack.AppendBytes(nil, nil), field(t, []byte(nil)); !bytes.Equal(got, want) {
		t.Errorf("nil bytes: %x, reflection %x", got, want)
	}
	for _, v := range []bool{false, true} {
		if got, want := mpack.AppendBool(nil, v), field(t, v); !bytes.Equal(got, want) {
			t.Errorf("bool %v: %x, reflection %x", v, got, want)
		}
	}
	for _, n := range []int{0, 15, 16, 65535, 65536} {
		m := make(map[int]bool, n)
		for i := range n {
			m[i] = true
		}
		want := marshal(t, m)
		if got := mpack.AppendMapLen(nil, n); !bytes.HasPrefix(want, got) || len(got) == 0 {
			t.Errorf("map of %d: header %x, reflection starts %x", n, got, want[:min(len(want), 5)])
		}
	}
}

// TestReaderReadsEveryEncoding: the reader takes each integer width
// msgpack writes (compact or not), str or bin for bytes, nil for empty
// values, and skips values of every type.
func TestReaderReadsEveryEncoding(t *testing.T) {
	for _, n := range []int64{0, 5, -5, 200, -200, 70000, -70000, 1 << 40, -(1 << 40)} {
		encs := [][]byte{marshal(t, n), field(t, n), field(t, int(n))}
		if n == int64(int8(n)) {
			encs = append(encs, marshal(t, int8(n)))
		}
		if n == int64(int32(n)) {
			encs = append(encs, marshal(t, int32(n)))
		}
		for _, b := range encs {
			if got := mpack.NewReader(b).Int(); got != n {
				t.Errorf("%x: read %d, want %d", b, got, n)
			}
		}
	}
	if got := mpack.NewReader(field(t, uint64(math.MaxUint64))).Uint64(); got != math.MaxUint64 {
		t.Errorf("max uint64 read as %d", got)
	}
	r := mpack.NewReader(append(append(marshal(t, "str as bytes"), marshal(t, []byte("bin as string"))...), marshal(t, nil)...))
	if got := r.Bytes(); string(got) != "str as bytes" {
		t.Errorf("str read as bytes %q", got)
	}
	if got := r.String(); got != "bin as string" {
		t.Errorf("bin read as string %q", got)
	}
	if got := r.Bytes(); got != nil || r.Err() != nil {
		t.Errorf("nil read as %v (%v)", got, r.Err())
	}

	// Skip: a map with a value of every kind, and a known key after it.
	doc := marshal(t, map[string]any{
		"a": []any{1, -1, 1 << 20, 1.5, float32(2.5), "s", []byte("b"), nil, true, false, map[string]any{"x": []any{}}},
		"e": msgpack.RawMessage{0xd6, 1, 0, 0, 0, 0}, // fixext 4
		"z": "last",
	})
	var last string
	rd := mpack.NewReader(doc)
	err := rd.Fields(func(key []byte) {
		if string(key) == "z" {
			last = rd.String()
			return
		}
		rd.Skip()
	})
	if err != nil || last != "last" {
		t.Errorf("skipping every kind: %v, last %q", err, last)
	}

	// Truncated input is an error, never a panic.
	for n := range len(doc) {
		rd := mpack.NewReader(doc[:n])
		if err := rd.Fields(func([]byte) { rd.Skip() }); !errors.Is(err, mpack.ErrMalformed) {
			t.Errorf("%d of %d bytes: %v, want ErrMalformed", n, len(doc), err)
		}
	}
	// A length beyond the input is refused before it is taken.
	if err := mpack.NewReader([]byte{0xdf, 0xff, 0xff, 0xff, 0xff}).Fields(func([]byte) {}); !errors.Is(err, mpack.ErrMalformed) {
		t.Errorf("a map of 4G pairs in 5 bytes: %v", err)
	}
	if got := mpack.NewReader([]byte{0xc6, 0x7f, 0xff, 0xff, 0xff}); got.Bytes() != nil || got.Err() == nil {
		t.Errorf("2 GiB of bin in 5 bytes read without an error")
	}
}
