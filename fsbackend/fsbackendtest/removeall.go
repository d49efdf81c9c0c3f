package fsbackendtest

import (
	"fmt"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

func init() {
	register("RemoveAll", testRemoveAll)
}

// testRemoveAll deletes a directory's tree and nothing beside it: not a
// sibling whose name starts with the directory's, not its parent's other
// files, not a file named like the directory in another place. A missing
// directory is no error, and the directory can be written again after.
func testRemoveAll(t *testing.T, e *env) {
	for i := range 30 {
		e.write(fmt.Sprintf("ns/job/f%02d", i), []byte("x"))
	}
	e.write("ns/job/latest/p1", nil)
	e.write("ns/job/latest/deep/er", []byte("y"))
	e.write("ns/jobx/keep", []byte("k"))
	e.write("ns/job-keep", []byte("k"))
	e.write("ns/other/job/keep", []byte("k"))
	if err := fsbackend.RemoveAll(e.ctx, e.fs, "ns/job"); err != nil {
		t.Fatalf("RemoveAll(ns/job): %v", err)
	}
	e.wantList("ns", "ns/job-keep", "ns/jobx/keep", "ns/other/job/keep")
	if err := fsbackend.RemoveAll(e.ctx, e.fs, "ns/job"); err != nil {
		t.Fatalf("RemoveAll of a removed directory: %v", err)
	}
	if err := fsbackend.RemoveAll(e.ctx, e.fs, "none/at/all"); err != nil {
		t.Fatalf("RemoveAll of a directory never made: %v", err)
	}
	if err := fsbackend.RemoveAll(e.ctx, e.fs, "ns/job-keep"); err != nil {
		t.Fatalf("RemoveAll of a file's name: %v", err)
	}
	e.wantList("ns", "ns/job-keep", "ns/jobx/keep", "ns/other/job/keep")
	if err := fsbackend.RemoveAll(e.ctx, e.fs, "/ns"); err == nil {
		t.Fatal("RemoveAll(/ns) accepted an invalid name")
	}
	e.write("ns/job/f00", []byte("again"))
	e.wantContent("ns/job/f00", []byte("again"))
	if d, ok := e.fs.(fsbackend.DirSyncer); ok {
		v := d.Deferred()
		if err := fsbackend.RemoveAll(e.ctx, v, "ns/jobx"); err != nil {
			t.Fatalf("RemoveAll through the Deferred view: %v", err)
		}
		if err := d.SyncDir(e.ctx, "ns"); err != nil {
			t.Fatalf("SyncDir(ns): %v", err)
		}
		e.wantList("ns", "ns/job-keep", "ns/job/f00", "ns/other/job/keep")
	}
}
