package filestore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/memfs"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/serde/keyhash"
	"github.com/stowage/stowage/serde/record"
)

// The fuzz targets of this file feed the store's own payload decoders
// (decodeRecord, decodeSnapshot, decodeMeta) and a whole Open and load
// arbitrary bytes. None may panic; what decodes must encode back to bytes
// that decode to the same value. Seeds are values the encoders wrote.

const fuzzParts = 8

func seedRecords() []mapstore.Record {
	return []mapstore.Record{
		{Partition: 3, Version: mapstore.Version{Epoch: 1, Seq: 1}, Key: []byte("job-1"), Value: []byte(`{"state":"RUNNING"}`)},
		{Partition: 0, Version: mapstore.Version{Epoch: 7, Seq: 1 << 40}, Key: []byte{}, Value: []byte{}},
		{Partition: 7, Version: mapstore.Version{Epoch: 2, Seq: 300}, Key: []byte("gone"), Deleted: true},
	}
}

// frames splits b into its frames (b is well formed).
func frames(b []byte) []record.Frame {
	var out []record.Frame
	for len(b) > 0 {
		f, n, err := record.Decode(b)
		if err != nil {
			panic(err)
		}
		out = append(out, f)
		b = b[n:]
	}
	return out
}

func FuzzDecodeRecord(f *testing.F) {
	for _, r := range seedRecords() {
		b := appendRecord(nil, &r)
		fr := frames(b)[0]
		f.Add(fr.Type, fr.Payload)
	}
	f.Add(byte(typeEpoch), encodeEpoch(5, mapstore.Version{Epoch: 3, Seq: 99}))
	f.Add(byte(typePut), []byte{0x80})
	f.Fuzz(func(t *testing.T, typ byte, payload []byte) {
		e, err := decodeRecord(record.Frame{Type: typ, Payload: payload})
		if err != nil {
			return
		}
		if typ != typePut && typ != typeDelete && typ != typeEpoch {
			t.Fatalf("frame type %q decoded as a record", typ)
		}
		if len(e.key)+len(e.value) > len(payload) {
			t.Fatalf("key %d + value %d bytes out of a %d-byte payload", len(e.key), len(e.value), len(payload))
		}
		if typ == typeEpoch {
			again, err := decodeRecord(record.Frame{Type: typeEpoch, Payload: encodeEpoch(e.part, e.ver)})
			if err != nil || again.part != e.part || again.ver != e.ver {
				t.Fatalf("epoch start %d %v re-encoded decodes as %d %v, %v", e.part, e.ver, again.part, again.ver, err)
			}
			return
		}
		if e.part < 0 {
			return // a partition number beyond int: the loader reports it as outside
		}
		r := mapstore.Record{Partition: e.part, Version: e.ver, Key: e.key, Value: e.value, Deleted: typ == typeDelete}
		b := appendRecord(nil, &r)
		fr := frames(b)[0]
		again, err := decodeRecord(fr)
		if err != nil || again.typ != typ || again.part != e.part || again.ver != e.ver ||
			!bytes.Equal(again.key, e.key) || !bytes.Equal(again.value, e.value) {
			t.Fatalf("record %+v re-encoded decodes as %+v, %v", e, again, err)
		}
	})
}

func FuzzDecodeSnapshot(f *testing.F) {
	h := fileHeader{Format: FormatVersion, Partitions: fuzzParts, Gen: 1, Run: "20260101T000000-00000000"}
	var entries []mapstore.Record
	for _, r := range seedRecords() {
		if !r.Deleted {
			r.Partition = 3
			entries = append(entries, r)
		}
	}
	full, _ := encodeSnapshot(h, 3, mapstore.Version{Epoch: 7, Seq: 1 << 40}, entries)
	empty, _ := encodeSnapshot(h, 3, mapstore.Version{}, nil)
	f.Add(full, uint8(3))
	f.Add(empty, uint8(3))
	f.Add(full[:len(full)-3], uint8(3))
	f.Add(full, uint8(4))
	f.Fuzz(func(t *testing.T, buf []byte, p uint8) {
		part := int(p % fuzzParts)
		got, err := decodeSnapshot(buf, part, fuzzParts)
		if err != nil {
			return
		}
		n, err := checkSnapshot(buf, part, fuzzParts)
		if err != nil || n != len(got) {
			t.Fatalf("checkSnapshot after a clean decode: %d entries, %v; decoded %d", n, err, len(got))
		}
		again, _ := encodeSnapshot(h, part, mapstore.Version{}, got)
		got2, err := decodeSnapshot(again, part, fuzzParts)
		if err != nil || len(got2) != len(got) {
			t.Fatalf("re-encoded snapshot of %d entries decodes to %d, %v", len(got), len(got2), err)
		}
		for i := range got {
			if !bytes.Equal(got[i].Key, got2[i].Key) || !bytes.Equal(got[i].Value, got2[i].Value) || got[i].Version != got2[i].Version {
				t.Fatalf("entry %d: %+v re-encoded decodes as %+v", i, got[i], got2[i])
			}
		}
	})
}

func FuzzDecodeMeta(f *testing.F) {
	m := metaInfo{Format: FormatVersion, Partitions: keyhash.DefaultPartitions, Gen: 1, HashID: keyhash.ID}
	f.Add(encodeMeta(m))
	f.Add(encodeMeta(metaInfo{}))
	f.Add(append(encodeMeta(m), 0))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMeta(b)
		if err != nil {
			return
		}
		again, err := decodeMeta(encodeMeta(m))
		if err != nil || !reflect.DeepEqual(again, m) {
			t.Fatalf("META %+v re-encoded decodes as %+v, %v", m, again, err)
		}
	})
}

// FuzzLoad writes arbitrary bytes as a log file and as a snapshot of a map
// directory with a valid META, then opens the store and loads every
// partition: it must not panic nor fail, and the damage it reports must
// lie inside the files.
func FuzzLoad(f *testing.F) {
	run := "20260101T000000-00000000"
	h := fileHeader{Format: FormatVersion, Partitions: fuzzParts, Gen: 1, Run: run}
	logBytes := record.Append(nil, typeLogHeader, encodeHeader(nil, h))
	for _, r := range seedRecords() {
		logBytes = appendRecord(logBytes, &r)
	}
	logBytes = record.Append(logBytes, typeEpoch, encodeEpoch(3, mapstore.Version{Epoch: 2, Seq: 1}))
	snap, _ := encodeSnapshot(h, 3, mapstore.Version{Epoch: 1, Seq: 1}, []mapstore.Record{{Partition: 3, Version: mapstore.Version{Epoch: 1, Seq: 1}, Key: []byte("k"), Value: []byte("v")}})
	f.Add(logBytes, snap)
	f.Add(logBytes[:len(logBytes)-5], snap[:len(snap)-1])
	flipped := bytes.Clone(logBytes)
	flipped[len(flipped)/2] ^= 0xff
	f.Add(flipped, []byte{})
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	meta := encodeMeta(metaInfo{Format: FormatVersion, Partitions: fuzzParts, Gen: 1, HashID: keyhash.ID})
	f.Fuzz(func(t *testing.T, logData, snapData []byte) {
		ctx := context.Background()
		mem := memfs.New()
		files := map[string][]byte{
			metaName:           meta,
			logName(1, run, 1): logData,
			snapName(1, 3, mapstore.Version{Epoch: 1, Seq: 1}): snapData,
		}
		for name, b := range files {
			if err := fsbackend.WriteFile(ctx, mem, name, b); err != nil {
				t.Fatal(err)
			}
		}
		var damageErr error
		s, err := Open(ctx, Options{FS: mem, Partitions: fuzzParts, Logger: quiet, OnDamage: func(d Damage) {
			if b, ok := files[d.File]; ok && (d.Offset < 0 || d.Offset > int64(len(b))) && damageErr == nil {
				damageErr = fmt.Errorf("damage %v lies outside the %d-byte file", d, len(b))
			}
		}})
		if err != nil {
			return // an error, not a panic, is fine
		}
		defer s.Close()
		for p := 0; p < fuzzParts; p++ {
			// A record's partition is taken as written (the key bytes are
			// the caller's serialized key): only the absence of panics and
			// of errors is checked here.
			err := s.LoadPartition(ctx, p, func(mapstore.Record) error { return nil })
			if err != nil {
				t.Fatalf("partition %d: %v", p, err)
			}
		}
		if damageErr != nil {
			t.Fatal(damageErr)
		}
	})
}
