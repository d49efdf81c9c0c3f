package filestore

import (
	"testing"

	"github.com/stowage/stowage/internal/testutil/golden"
	"github.com/stowage/stowage/mapstore"
)

// TestGoldenExpiryFrames pins the bytes of the frames entry expiry added
// (a put with a deadline, a snapshot chunk with deadlines) next to those
// of a put and a chunk without one, which must stay as before.
func TestGoldenExpiryFrames(t *testing.T) {
	var out []byte
	for _, r := range []mapstore.Record{
		{Partition: 3, Version: mapstore.Version{Epoch: 2, Seq: 7}, Key: []byte("job-1"), Value: []byte("running")},
		{Partition: 3, Version: mapstore.Version{Epoch: 2, Seq: 8}, Key: []byte("job-2"), Value: []byte("finished"), Expires: 1_767_225_600_000_000_000},
		{Partition: 3, Version: mapstore.Version{Epoch: 2, Seq: 9}, Key: []byte("job-2"), Deleted: true},
	} {
		out = appendRecord(out, &r)
	}
	snap, _ := encodeSnapshot(fileHeader{Format: FormatVersion, Partitions: 7, Gen: 1, Run: "20260101T000000-0000aaaa"}, 3,
		mapstore.Version{Epoch: 2, Seq: 9}, []mapstore.Record{
			{Partition: 3, Version: mapstore.Version{Epoch: 2, Seq: 7}, Key: []byte("job-1"), Value: []byte("running")},
			{Partition: 3, Version: mapstore.Version{Epoch: 2, Seq: 8}, Key: []byte("job-3"), Value: []byte("finished"), Expires: 1_767_225_600_000_000_000},
		})
	out = append(out, snap...)
	golden.Check(t, "../../testdata/mapstore/expiry-frames.golden", out, "a change of the map store's record format")
	if _, err := checkSnapshot(snap, 3, 7); err != nil {
		t.Fatalf("snapshot with a K chunk: %v", err)
	}
}
