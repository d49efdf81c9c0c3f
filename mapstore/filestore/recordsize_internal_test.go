package filestore

import (
	"bytes"
	"testing"

	"github.com/stowage/stowage/mapstore"
)

// recordSize is the length of the framed record, for every kind and for
// fields whose varints take one byte and several.
func TestRecordSizeIsFramedLength(t *testing.T) {
	big := bytes.Repeat([]byte("v"), 300)
	for _, r := range []mapstore.Record{
		{Partition: 3, Version: mapstore.Version{Epoch: 1, Seq: 7}, Key: []byte("k"), Value: []byte("v")},
		{Partition: 270, Version: mapstore.Version{Epoch: 1 << 40, Seq: 1 << 20}, Key: big, Value: big},
		{Partition: 5, Version: mapstore.Version{Epoch: 2, Seq: 200}, Key: []byte("job"), Value: big, Expires: 1_767_225_600_000_000_000},
		{Partition: 5, Version: mapstore.Version{Epoch: 2, Seq: 201}, Key: []byte("job"), Deleted: true},
		{Partition: 0, Version: mapstore.Version{}, Key: nil, Value: nil},
	} {
		if got, want := recordSize(&r), len(appendRecord(nil, &r)); got != want {
			t.Errorf("recordSize(%+v) = %d, want %d", r, got, want)
		}
	}
}
