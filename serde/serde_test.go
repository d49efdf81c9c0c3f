package serde_test

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/serde"
)

type jobKey struct {
	Job      string
	Pipeline int
	Tags     map[string]int
}

type state struct {
	ID      int64
	Name    string
	Blob    []byte
	Ratio   float64
	Done    bool
	At      time.Time
	Parts   []jobKey
	Extra   map[string]any
	Counts  map[int]string
	Pointer *jobKey
}

// roundTrip encodes and decodes v with c and checks the result is equal.
func roundTrip[T any](t *testing.T, c serde.Codec[T], v T) []byte {
	t.Helper()
	b, err := c.Encode(v)
	if err != nil {
		t.Fatalf("Encode(%#v): %v", v, err)
	}
	got, err := c.Decode(b)
	if err != nil {
		t.Fatalf("Decode of %#v: %v", v, err)
	}
	if !reflect.DeepEqual(got, v) {
		t.Fatalf("round trip of %#v gave %#v", v, got)
	}
	return b
}

func TestMsgpackRoundTrips(t *testing.T) {
	at := time.Date(2026, 12, 2, 13, 0, 0, 123456789, time.Local) // msgpack decodes times as Local
	t.Run("struct", func(t *testing.T) {
		c := serde.Msgpack[state]()
		for _, v := range []state{
			{},
			{ID: -7, Name: "job-1", Blob: []byte{0, 0xff}, Ratio: 0.25, Done: true, At: at},
			{Parts: []jobKey{{Job: "a", Tags: map[string]int{"z": 1, "a": 2}}}, Counts: map[int]string{3: "c", -1: "m"}},
			{Extra: map[string]any{"n": int8(1), "s": "x", "nested": map[string]any{"b": true, "a": "y"}}},
			{Pointer: &jobKey{Job: "p", Pipeline: 2}},
		} {
			roundTrip(t, c, v)
		}
	})
	t.Run("scalars", func(t *testing.T) {
		roundTrip(t, serde.Msgpack[string](), "héllo, 漢字")
		roundTrip(t, serde.Msgpack[int64](), -1<<63)
		roundTrip(t, serde.Msgpack[uint64](), 1<<64-1)
		roundTrip(t, serde.Msgpack[float64](), 3.5)
		roundTrip(t, serde.Msgpack[bool](), true)
		roundTrip(t, serde.Msgpack[[]string](), []string{"a", "", "c"})
		roundTrip(t, serde.Msgpack[[]byte](), []byte{1, 2, 3})
		roundTrip(t, serde.Msgpack[map[string]int](), map[string]int{"x": 1, "y": 2})
		roundTrip(t, serde.Msgpack[*jobKey](), nil)
	})
}

func TestRawCodecs(t *testing.T) {
	for _, s := range []string{"", "a", "héllo", "with\x00nul", strings.Repeat("k", 1000)} {
		if b := roundTrip(t, serde.String(), s); string(b) != s {
			t.Errorf("String().Encode(%q) = %q, want the raw bytes", s, b)
		}
	}
	for _, v := range [][]byte{{}, {0}, {0xF7, 0x5A, 0x01}, bytes.Repeat([]byte{9}, 4096)} {
		if b := roundTrip(t, serde.Bytes(), v); !bytes.Equal(b, v) {
			t.Errorf("Bytes().Encode(%x) = %x, want the bytes themselves", v, b)
		}
	}
	for _, v := range [][]byte{nil, {}} {
		enc, _ := serde.Bytes().Encode(v)
		dec, _ := serde.Bytes().Decode(enc)
		if enc == nil || dec == nil || len(dec) != 0 {
			t.Errorf("Bytes codec of %#v: Encode %#v, Decode %#v; want empty, non-nil", v, enc, dec)
		}
	}
	if enc, _ := serde.String().Encode(""); enc == nil {
		t.Error("String().Encode(\"\") = nil, want an empty, non-nil slice")
	}
	// Neither side aliases the caller's slice.
	in := []byte{0, 1, 2}
	enc, _ := serde.Bytes().Encode(in)
	dec, _ := serde.Bytes().Decode(in)
	in[0] = 9
	if enc[0] != 0 || dec[0] != 0 {
		t.Fatal("Bytes codec aliases its input")
	}
}

func TestMsgpackDecodeErrors(t *testing.T) {
	c := serde.Msgpack[jobKey]()
	for _, b := range [][]byte{{0xc1}, {0x81}, {0xdf, 0xff, 0xff, 0xff, 0xff}, {0xa5, 'a'}} {
		_, err := c.Decode(b)
		if err == nil {
			t.Errorf("Decode(%x) succeeded", b)
			continue
		}
		if !strings.HasPrefix(err.Error(), "stowage/serde: ") {
			t.Errorf("Decode(%x) error %q lacks the package prefix", b, err)
		}
	}
}

// TestMsgpackKeysAreDeterministic: equal keys give equal bytes however
// their maps were built, on every encode.
func TestMsgpackKeysAreDeterministic(t *testing.T) {
	build := func(order []string) jobKey {
		m := map[string]int{}
		for i, k := range order {
			m[k] = len(order) - i
		}
		return jobKey{Job: "j", Pipeline: 1, Tags: m}
	}
	keys := strings.Split("q w e r t y u i o p a s d f g h j k l z x c v b n m", " ")
	rev := make([]string, len(keys))
	for i, k := range keys {
		rev[len(keys)-1-i] = k
	}
	c := serde.Msgpack[jobKey]()
	first, err := c.Encode(build(keys))
	if err != nil {
		t.Fatal(err)
	}
	a, b := build(keys), build(rev)
	for k := range a.Tags {
		b.Tags[k] = a.Tags[k] // equal maps, built in opposite orders
	}
	for i := 0; i < 200; i++ {
		v := a
		if i%2 == 1 {
			v = b
		}
		got, err := c.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, first) {
			t.Fatalf("encoding %d differs:\n%x\n%x", i, got, first)
		}
	}
}

func TestMsgpackNestedMapKeysAreDeterministic(t *testing.T) {
	c := serde.Msgpack[map[string]any]()
	mk := func() map[string]any {
		inner := map[string]any{}
		for _, k := range []string{"delta", "alpha", "charlie", "bravo", "echo", "foxtrot"} {
			inner[k] = []any{k, map[string]any{"y": 1, "x": 2, "z": k}}
		}
		return map[string]any{"outer": inner, "b": 1, "a": map[string]any{"2": 2, "1": 1, "3": 3}}
	}
	first, err := c.Encode(mk())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		got, err := c.Encode(mk())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, first) {
			t.Fatalf("encoding %d of a nested map differs", i)
		}
	}
	ints := serde.Msgpack[map[int]string]()
	one, _ := ints.Encode(map[int]string{1: "a", 2: "b", 3: "c", 40000: "d", -5: "e"})
	for i := 0; i < 100; i++ {
		again, _ := ints.Encode(map[int]string{-5: "e", 40000: "d", 3: "c", 2: "b", 1: "a"})
		if !bytes.Equal(again, one) {
			t.Fatalf("encoding %d of an int-keyed map differs", i)
		}
	}
}

// TestMsgpackCanonicalKeepsValues covers what a decode-and-re-encode
// canonicalization would lose: keys that are arrays, times, ints of every
// width and nested maps inside slices inside maps.
func TestMsgpackCanonicalKeepsValues(t *testing.T) {
	type wide struct {
		ByID   map[[4]byte]string
		Mixed  map[string]any
		Nested []map[uint16][]map[string]int8
	}
	at := time.Date(2030, 1, 2, 3, 4, 5, 6, time.Local)
	mk := func() wide {
		return wide{
			ByID: map[[4]byte]string{{1, 2, 3, 4}: "a", {0, 0, 0, 1}: "b", {9, 9, 9, 9}: "c", {0xff, 0, 0, 0}: "d"},
			Mixed: map[string]any{
				"t": at, "i8": int8(-3), "u64": uint64(1 << 60), "f32": float32(1.5), "bin": []byte{0xc1},
				"m": map[string]any{"z": nil, "a": []any{"x", int64(-1 << 40)}},
			},
			Nested: []map[uint16][]map[string]int8{{500: {{"b": 1, "a": 2}}, 3: nil}},
		}
	}
	c := serde.Msgpack[wide]()
	first := roundTrip(t, c, mk())
	for i := 0; i < 50; i++ {
		b, err := c.Encode(mk())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, first) {
			t.Fatalf("encoding %d differs", i)
		}
	}
}
