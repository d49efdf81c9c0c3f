package backup

import (
	"fmt"
	"maps"
	"testing"
)

// merge is what a delta's receiver installs: its own entries of the
// buckets not redone, then the delta's.
func merge(t *testing.T, own []Entry, mp MapPart) map[string]Entry {
	t.Helper()
	out := map[string]Entry{}
	if mp.Delta == nil {
		for _, e := range mp.Entries {
			out[string(e.K)] = e
		}
		return out
	}
	s := NewSummer(mp.Delta.Buckets)
	for _, e := range own {
		s.Add(e)
	}
	if !s.Matches(mp.Delta) {
		t.Fatal("the receiver's copy does not match the delta's base")
	}
	for _, e := range own {
		if s.Keeps(mp.Delta, e.K) {
			out[string(e.K)] = e
		}
	}
	for _, e := range mp.Entries {
		out[string(e.K)] = e
	}
	return out
}

func entryMap(es []Entry) map[string]Entry {
	out := map[string]Entry{}
	for _, e := range es {
		out[string(e.K)] = e
	}
	return out
}

func sameEntries(a, b map[string]Entry) bool {
	return maps.EqualFunc(a, b, func(x, y Entry) bool {
		return string(x.V) == string(y.V) && x.R == y.R && x.X == y.X && x.D == y.D
	})
}

// A delta against a copy installs exactly the sender's entries, whatever
// differs: a value, a version alone, an expiry alone, a key deleted or
// added; and sends only a few buckets for a few changes.
func TestDeltaInstallsTheSendersEntries(t *testing.T) {
	var own []Entry
	for i := range 1000 {
		own = append(own, Entry{K: fmt.Appendf(nil, "k%d", i), V: fmt.Appendf(nil, "v%d", i), R: Ver{E: 1, S: uint64(i + 1)}})
	}
	theirs := append([]Entry(nil), own...)
	theirs[10].V = []byte("changed")
	theirs[10].R = Ver{E: 2, S: 1}
	theirs[20].R = Ver{E: 2, S: 2} // same value, new version
	theirs[30].X = 12345           // same value and version, an expiry
	theirs = append(theirs[:40], theirs[41:]...)
	theirs = append(theirs, Entry{K: []byte("new"), V: []byte("n"), R: Ver{E: 2, S: 3}})

	d := DigestOf(&MapPart{Map: "m", Entries: own}, BucketsFor(len(own)))
	full := MapPart{Map: "m", Entries: theirs}
	pd, saved := deltaData(PartData{P: 3, Maps: []MapPart{full}}, []Digest{d})
	mp := pd.Maps[0]
	if mp.Delta == nil || saved < len(theirs)-40 {
		t.Fatalf("delta %v, %d entries left out of %d: want most left out", mp.Delta, saved, len(theirs))
	}
	if got := merge(t, own, mp); !sameEntries(got, entryMap(theirs)) {
		t.Fatalf("the delta installs %d entries unlike the sender's %d", len(got), len(theirs))
	}
	// The copy changed after its digest: the delta no longer fits.
	own[500].V = []byte("late")
	s := NewSummer(mp.Delta.Buckets)
	for _, e := range own {
		s.Add(e)
	}
	if s.Matches(mp.Delta) {
		t.Fatal("a copy that changed since its digest still matches the delta's base")
	}
}

// A digest that is not one (from a member that sent garbage) leaves the
// data whole.
func TestDeltaOfMalformedDigestIsWhole(t *testing.T) {
	full := MapPart{Map: "m", Entries: []Entry{{K: []byte("a"), V: []byte("1")}, {K: []byte("b"), V: []byte("2")}}}
	for _, sums := range [][]uint64{nil, {1}, {1, 2, 3}, make([]uint64, 6), make([]uint64, 2*(maxBuckets*2))} {
		if mp, ok := deltaOf(full, Digest{Map: "m", Sums: sums}); ok || mp.Delta != nil || len(mp.Entries) != 2 {
			t.Errorf("digest of %d words: delta %v, %d entries; want the data whole", len(sums), mp.Delta, len(mp.Entries))
		}
	}
	// A delta whose buckets are out of order or range is refused.
	s := NewSummer(4)
	base := fingerprint(s.sums)
	for _, redo := range [][]uint32{{2, 1}, {1, 1}, {4}} {
		if s.Matches(&Delta{Buckets: 4, Base: base, Redo: redo}) {
			t.Errorf("a delta redoing buckets %v of 4 matches", redo)
		}
	}
	if !s.Matches(&Delta{Buckets: 4, Base: base, Redo: []uint32{0, 3}}) {
		t.Error("a well-formed delta does not match")
	}
}
