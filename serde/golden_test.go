package serde_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"reflect"
	"testing"

	"github.com/stowage/stowage/internal/testutil/golden"
	"github.com/stowage/stowage/serde"
)

// pipelineKey is a typed key the way an engine keys pipeline state.
type pipelineKey struct {
	JobID    int64
	Pipeline int32
	Name     string
}

// goldenKey encodes v with the Msgpack codec of its type, checks it
// decodes back to v, and returns one golden line.
func goldenKey[T any](t *testing.T, name string, v T) string {
	t.Helper()
	c := serde.Msgpack[T]()
	b, err := c.Encode(v)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	back, err := c.Decode(b)
	if err != nil || !reflect.DeepEqual(back, v) {
		t.Fatalf("%s: %x decodes to %#v, %v; want %#v", name, b, back, err, v)
	}
	return fmt.Sprintf("%s\t%s\n", name, hex.EncodeToString(b))
}

// TestMsgpackKeyBytesArePinned pins the bytes the Msgpack codec gives
// typed keys against testdata/msgpack_keys.golden. Key bytes are what
// partition.Of hashes and what the map store keeps, so a change of
// encoding (a msgpack upgrade, another struct or map rule) would move keys
// to other partitions and make stored keys unreachable: it must be a
// visible diff of the golden file.
func TestMsgpackKeyBytesArePinned(t *testing.T) {
	var out bytes.Buffer
	out.WriteString("# serde.Msgpack key bytes, hex\n")
	out.WriteString(goldenKey(t, "struct", pipelineKey{JobID: 733806217364455425, Pipeline: 1, Name: "source-0"}))
	out.WriteString(goldenKey(t, "struct-zero", pipelineKey{}))
	out.WriteString(goldenKey(t, "struct-with-map", jobKey{Job: "j1", Pipeline: 2, Tags: map[string]int{"b": 2, "a": 1, "c": 3}}))
	out.WriteString(goldenKey(t, "map-string-int", map[string]int{"zeta": 26, "alpha": 1, "mu": 12}))
	out.WriteString(goldenKey(t, "map-int-string", map[int]string{300: "c", -1: "a", 7: "b"}))
	out.WriteString(goldenKey(t, "int-small", 42))
	out.WriteString(goldenKey(t, "int-negative", -33))
	out.WriteString(goldenKey(t, "int64-large", int64(1)<<40))
	out.WriteString(goldenKey(t, "uint64-max", uint64(1<<64-1)))
	out.WriteString(goldenKey(t, "string", "engine_runningJobInfo"))
	out.WriteString(goldenKey(t, "string-empty", ""))
	out.WriteString(goldenKey(t, "string-long", string(bytes.Repeat([]byte("x"), 40))))
	golden.Check(t, "testdata/msgpack_keys.golden", out.Bytes(), "a key encoding change")
}
