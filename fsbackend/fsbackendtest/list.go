package fsbackendtest

import (
	"errors"
	"io/fs"
	"testing"
)

func init() {
	register("List", testList)
	register("ListPrefixIsNotADirectory", testListPrefix)
	register("ListOfAFile", testListOfAFile)
	register("Remove", testRemove)
}

func testList(t *testing.T, e *env) {
	e.wantList("")
	e.wantList("missing")
	e.wantList("missing/deeper")
	files := map[string]int{
		"z":         1,
		"a/2":       2,
		"a/10":      3,
		"a/b/c/d":   4,
		"a/b/e":     5,
		"b":         6,
		"a-sibling": 7,
	}
	// Created out of order, so a sorted answer is not an accident.
	for _, name := range []string{"z", "a/b/e", "a/10", "b", "a/b/c/d", "a-sibling", "a/2"} {
		e.write(name, pattern(files[name], 1))
	}
	e.wantList("", "a-sibling", "a/10", "a/2", "a/b/c/d", "a/b/e", "b", "z")
	e.wantList("a", "a/10", "a/2", "a/b/c/d", "a/b/e")
	e.wantList("a/b", "a/b/c/d", "a/b/e")
	e.wantList("a/b/c", "a/b/c/d")
	list, err := e.fs.List(e.ctx, "a")
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	for _, fi := range list {
		if fi.Size != int64(files[fi.Name]) {
			t.Errorf("List entry %q has Size %d, want %d", fi.Name, fi.Size, files[fi.Name])
		}
	}
}

// testListPrefix checks that List works on directories, not on string
// prefixes: a file under "a/bc" is not below "a/b".
func testListPrefix(t *testing.T, e *env) {
	e.write("a/bc/f", []byte("1"))
	e.write("a/b/g", []byte("2"))
	e.write("a/b.x", []byte("3"))
	e.wantList("a/b", "a/b/g")
	e.wantList("a/bc", "a/bc/f")
}

// testListOfAFile: a file is not a directory, so nothing lies below it.
func testListOfAFile(t *testing.T, e *env) {
	e.write("d/f", []byte("x"))
	e.wantList("d/f")
}

func testRemove(t *testing.T, e *env) {
	e.write("d/a", []byte("a"))
	e.write("d/b", []byte("b"))
	e.write("d/sub/c", []byte("c"))
	if err := e.fs.Remove(e.ctx, "d/a"); err != nil {
		t.Fatalf("Remove(d/a): %v", err)
	}
	e.wantMissing("d/a")
	e.wantList("d", "d/b", "d/sub/c")
	if err := e.fs.Remove(e.ctx, "d/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("second Remove(d/a): %v, want an error matching fs.ErrNotExist", err)
	}
	if err := e.fs.Remove(e.ctx, "never/was"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Remove(never/was): %v, want an error matching fs.ErrNotExist", err)
	}
	if err := e.fs.Remove(e.ctx, "d/sub/c"); err != nil {
		t.Fatalf("Remove(d/sub/c): %v", err)
	}
	e.wantList("d/sub")
	e.wantList("d", "d/b")
	if err := e.fs.Remove(e.ctx, "d/b"); err != nil {
		t.Fatalf("Remove(d/b): %v", err)
	}
	e.wantList("")
	// The emptied directory is usable again.
	e.write("d/sub/c", []byte("again"))
	e.wantContent("d/sub/c", []byte("again"))
}
