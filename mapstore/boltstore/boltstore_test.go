package boltstore_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/boltstore"
	"github.com/stowage/stowage/mapstore/mapstoretest"
)

func TestMain(m *testing.M) {
	if p := os.Getenv("BOLTSTORE_HOLD"); p != "" {
		s, err := boltstore.Open(p, boltstore.Options{MapName: "m"})
		if err != nil {
			os.Exit(3)
		}
		os.Stdout.WriteString("holding\n")
		time.Sleep(time.Minute)
		s.Close()
		os.Exit(0)
	}
	goleak.VerifyTestMain(m)
}

func TestContract(t *testing.T) {
	mapstoretest.Run(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
		s, err := boltstore.Open(filepath.Join(dir, "maps.db"), boltstore.Options{MapName: "engine_m", Partitions: partitions})
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestSecondProcessIsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "maps.db")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "BOLTSTORE_HOLD="+path)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	buf := make([]byte, 8)
	if _, err := out.Read(buf); err != nil || !strings.HasPrefix(string(buf), "holding") {
		t.Fatalf("child did not open the file: %v %q", err, buf)
	}
	_, err := boltstore.Open(path, boltstore.Options{MapName: "m", Timeout: 200 * time.Millisecond})
	if !errors.Is(err, mapstore.ErrLocked) || !strings.Contains(err.Error(), path) {
		t.Fatalf("second process: err = %v, want ErrLocked naming the file", err)
	}
}

func TestMapsShareOneFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "maps.db")
	a, err := boltstore.Open(path, boltstore.Options{MapName: "a"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := boltstore.Open(path, boltstore.Options{MapName: "b"})
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	// b still works after a closed: the file closes with its last map.
	if _, err := b.LoadAllKeys(t.Context()); err != nil {
		t.Fatal(err)
	}
	b.Close()
}
