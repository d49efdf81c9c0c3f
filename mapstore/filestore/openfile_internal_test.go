package filestore

import (
	"testing"
)

// unfinishedReader is a Reader whose file is still open for writing, or not.
type unfinishedReader struct{ open bool }

func (r unfinishedReader) ReadAt([]byte, int64) (int, error) { return 0, nil }
func (r unfinishedReader) Close() error                      { return nil }
func (r unfinishedReader) Size() int64                       { return 0 }
func (r unfinishedReader) Unfinished() bool                  { return r.open }

// A log file left open is recovered before it is read only when its run
// is another run that is not live: never this run's own (its open file
// or a batch file being written), never a live run's, never a snapshot.
func TestRecoverIfLeftOpen(t *testing.T) {
	const me, live, dead = "20260101T000000-aaaaaaaa", "20260101T000000-bbbbbbbb", "20260101T000000-cccccccc"
	shared := &Store{run: me, opts: Options{IsLive: func(run string) bool { return run == live }}}
	alone := &Store{run: me}
	for _, tc := range []struct {
		s    *Store
		name string
		open bool
		want bool
	}{
		{shared, logName(1, dead, 3), true, true},
		{shared, logName(1, dead, 3), false, false},
		{shared, logName(1, live, 3), true, false},
		{shared, logName(1, me, 3), true, false},
		{shared, "g1/snap/3/0000000000000001-0000000000000002.snap", true, false},
		{alone, logName(1, live, 3), true, true}, // without IsLive no other run is live
		{alone, logName(1, me, 3), true, false},
	} {
		if got := tc.s.recoverIfLeftOpen(unfinishedReader{tc.open}, tc.name); got != tc.want {
			t.Errorf("recoverIfLeftOpen(%s, open %v, shared %v) = %v, want %v", tc.name, tc.open, tc.s.shared(), got, tc.want)
		}
	}
}
