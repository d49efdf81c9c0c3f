package serde_test

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/stowage/stowage/serde"
)

type jobKey struct {
	Job      string
	Pipeline int
	Tags     map[string]int
}

func TestRoundTrips(t *testing.T) {
	k := jobKey{Job: "j1", Pipeline: 3, Tags: map[string]int{"b": 2, "a": 1, "c": 3}}
	c := serde.Msgpack[jobKey]()
	b, err := c.Encode(k)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode(b)
	if err != nil || !reflect.DeepEqual(got, k) {
		t.Fatalf("msgpack round trip = %+v, %v", got, err)
	}
	if s, _ := serde.String().Decode([]byte("héllo")); s != "héllo" {
		t.Fatalf("string = %q", s)
	}
	in := []byte{0, 1, 0xff}
	out, _ := serde.Bytes().Decode(in)
	in[0] = 9
	if out[0] != 0 {
		t.Fatal("Bytes.Decode aliases its input")
	}
	if _, err := c.Decode([]byte{0xc1}); err == nil {
		t.Fatal("decoding garbage did not fail")
	}
}

func TestMsgpackKeysAreDeterministic(t *testing.T) {
	c := serde.Msgpack[jobKey]()
	first, _ := c.Encode(jobKey{Job: "j", Tags: map[string]int{"x": 1, "y": 2, "z": 3, "w": 4, "v": 5}})
	for i := 0; i < 200; i++ {
		b, _ := c.Encode(jobKey{Job: "j", Tags: map[string]int{"v": 5, "w": 4, "x": 1, "y": 2, "z": 3}})
		if !bytes.Equal(b, first) {
			t.Fatalf("encoding %d differs: %x vs %x", i, b, first)
		}
	}
}
