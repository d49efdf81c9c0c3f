package backup

import (
	"testing"
	"time"

	"github.com/stowage/stowage/partition"
)

func TestTakeOversGroupedBySourceAndBounded(t *testing.T) {
	d := &Replicator{}
	at := time.Unix(1000, 0)
	d.recordTakeOvers([]source{
		{member: "b", kind: partition.HoldBackup},
		{store: true, member: "ignored"},
		{member: "b", kind: partition.HoldBackup},
		{member: "c", kind: partition.HoldHeld},
	}, 7, at)
	got := d.TakeOvers()
	want := []TakeOver{
		{At: at, Source: "promotion", From: "b", Partitions: 2, TableVersion: 7},
		{At: at, Source: "store", Partitions: 1, TableVersion: 7},
		{At: at, Source: "handover", From: "c", Partitions: 1, TableVersion: 7},
	}
	if len(got) != len(want) {
		t.Fatalf("take-overs %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("take-over %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	d.recordTakeOvers(nil, 8, at)
	if n := len(d.TakeOvers()); n != 3 {
		t.Fatalf("an empty batch added entries: %d", n)
	}
	for i := range takeOverKeep + 5 {
		d.recordTakeOvers([]source{{store: true}}, int64(100+i), at)
	}
	got = d.TakeOvers()
	if len(got) != takeOverKeep {
		t.Fatalf("kept %d take-overs, want %d", len(got), takeOverKeep)
	}
	if first, last := got[0].TableVersion, got[len(got)-1].TableVersion; first != 100+5 || last != 100+takeOverKeep+4 {
		t.Fatalf("kept table versions %d..%d, want the newest %d..%d", first, last, 105, 100+takeOverKeep+4)
	}
}
