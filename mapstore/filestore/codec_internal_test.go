package filestore

import (
	"bytes"
	"testing"

	"github.com/stowage/stowage/serde/keyhash"
)

// META carries the codec name only when one is recorded: without it the
// bytes are those of a META written before codecs were recorded, and
// with it they decode back to the same name.
func TestMetaCodecField(t *testing.T) {
	m := metaInfo{Format: FormatVersion, Partitions: 271, Gen: 3, HashID: keyhash.ID}
	plain := encodeMeta(m)
	m.Codec = "string msgpack:int"
	with := encodeMeta(m)
	if bytes.Equal(plain, with) {
		t.Fatal("the codec name changed nothing in META")
	}
	got, err := decodeMeta(with)
	if err != nil || got != m {
		t.Fatalf("decode = %+v, %v; want %+v", got, err, m)
	}
	m.Codec = ""
	if got, err := decodeMeta(plain); err != nil || got != m {
		t.Fatalf("decode without codec = %+v, %v", got, err)
	}
}
