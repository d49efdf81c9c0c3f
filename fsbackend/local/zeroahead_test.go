package local_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// TestZeroAhead: a writer told to keep zeros ahead keeps the file longer
// than what was written, zeros past it, and changes the file's size only
// once per that many bytes, not at each write; Truncate and Close cut the
// zeros, so a finished file holds exactly what was written; a file whose
// writer stopped without Close ends in them.
func TestZeroAhead(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	const ahead = 64 << 10
	for _, view := range []struct {
		name string
		fs   fsbackend.FS
	}{{"fs", f}, {"deferred", f.Deferred()}} {
		t.Run(view.name, func(t *testing.T) {
			name := view.name + "/seg.log"
			w, err := view.fs.Create(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			za, ok := w.(fsbackend.ZeroAheader)
			if !ok {
				t.Fatal("the local writer is not a ZeroAheader")
			}
			za.ZeroAhead(ahead)
			path := filepath.Join(f.Root(), name)
			size := func() int64 {
				st, err := os.Stat(path)
				if err != nil {
					t.Fatal(err)
				}
				return st.Size()
			}
			var want []byte
			sizes := map[int64]bool{}
			const writes = 200
			for i := range writes {
				b := bytes.Repeat([]byte{byte('a' + i%26)}, 1000+i)
				if _, err := w.Write(b); err != nil {
					t.Fatal(err)
				}
				if err := w.Sync(); err != nil {
					t.Fatal(err)
				}
				want = append(want, b...)
				n := size()
				if n < int64(len(want)) || n > int64(len(want))+ahead+int64(len(b)) {
					t.Fatalf("after %d bytes written the file is %d bytes; want %d to %d", len(want), n, len(want), len(want)+ahead+len(b))
				}
				sizes[n] = true
			}
			// 240 KiB written in 200 writes: the size changed about
			// once per 64 KiB.
			if most := len(want)/ahead + 2; len(sizes) > most {
				t.Fatalf("the file's size changed %d times in %d writes, want at most %d", len(sizes), writes, most)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got[:len(want)], want) {
				t.Fatal("the bytes written are not the file's first bytes")
			}
			if tail := got[len(want):]; len(tail) == 0 || bytes.Count(tail, []byte{0}) != len(tail) {
				t.Fatalf("a writer that stopped here leaves %d bytes past those written, want zeros only", len(tail))
			}

			// A failed batch cut off: the zeros go with it, and the next
			// write zeroes ahead again.
			tr := w.(fsbackend.Truncater)
			if err := tr.Truncate(int64(len(want) - 500)); err != nil {
				t.Fatal(err)
			}
			want = want[:len(want)-500]
			if n := size(); n != int64(len(want)) {
				t.Fatalf("after Truncate the file is %d bytes, want %d", n, len(want))
			}
			if _, err := w.Write([]byte("end")); err != nil {
				t.Fatal(err)
			}
			want = append(want, "end"...)
			if n := size(); n < int64(len(want))+ahead {
				t.Fatalf("after a write past Truncate the file is %d bytes, want at least %d", n, len(want)+ahead)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			got, err = os.ReadFile(path)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("closed file holds %d bytes (%v), want exactly the %d written", len(got), err, len(want))
			}
		})
	}
}
