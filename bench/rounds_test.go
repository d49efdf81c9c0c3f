package bench

import (
	"context"
	"testing"
	"time"
)

// The load rounds read the bytes the load loads, every reference all of
// them, and leave no round's copy behind.
func TestLoadRoundsReadTheSameFiles(t *testing.T) {
	dir := t.TempDir()
	rs, err := LoadRounds(context.Background(), dir, 2, 2000, 64, 500)
	if err != nil {
		t.Fatal(err) // also when a load did not hold the 2000 entries
	}
	if len(rs) != 2 {
		t.Fatalf("%d rounds, want 2", len(rs))
	}
	for i, r := range rs {
		if r.Bytes < 2000*64 || r.Raw <= 0 || r.RawKept <= 0 || r.RawParallel <= 0 || r.Load <= 0 {
			t.Errorf("round %d not filled in: %+v", i+1, r)
		}
	}
	golden := dir + "/golden/bench/" + loadMap
	n, _, err := RawReadCRC(golden)
	if err != nil {
		t.Fatal(err)
	}
	for name, read := range map[string]func(string) (int64, time.Duration, error){
		"kept":     func(d string) (int64, time.Duration, error) { return RawReadCRCKept(d) },
		"parallel": func(d string) (int64, time.Duration, error) { return RawReadCRCParallel(d) },
	} {
		if m, _, err := read(golden); err != nil || m != n {
			t.Errorf("%s raw read: %d bytes (%v), the sequential one %d", name, m, err, n)
		}
	}
}

// A second run in the same directory loads files of the same size, not
// the first run's files as well.
func TestLoadRoundsStartAfresh(t *testing.T) {
	dir := t.TempDir()
	var bytes []int64
	for range 2 {
		rs, err := LoadRounds(context.Background(), dir, 1, 2000, 64, 500)
		if err != nil {
			t.Fatal(err)
		}
		bytes = append(bytes, rs[0].Bytes)
	}
	if bytes[0] != bytes[1] {
		t.Fatalf("the second run in the same directory read %d bytes, the first %d", bytes[1], bytes[0])
	}
}

// The write rounds measure both sides each round.
func TestWriteRoundsMeasureBothSides(t *testing.T) {
	rs, err := WriteRounds(context.Background(), t.TempDir(), 2, 4, 20, 64)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		if r.Raw <= 0 || r.RawPerSync < 1 || r.Stowage.PutsPerSec <= 0 || r.Ratio() <= 0 {
			t.Errorf("round %d not filled in: %+v", i+1, r)
		}
	}
	if m := Median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("Median(3, 1, 2) = %v", m)
	}
}
