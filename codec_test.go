package stowage_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/serde"
)

// A persisted map records the codecs it was first opened with: opening
// it with others fails with ErrCodecMismatch naming both, across a
// restart too, while a raw view (serde.Bytes values) and the same codecs
// work. Both kinds of map store.
func TestCodecRecorded(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"files", "bbolt"} {
		t.Run(kind, func(t *testing.T) {
			var cfg *config.Config
			if kind == "bbolt" {
				cfg = boltConfig(t, filepath.Join(t.TempDir(), "maps.db"))
			} else {
				cfg = persisted(t, t.TempDir(), "")
			}
			n := open(t, stowage.Options{Config: cfg})
			if err := strMap(t, n, "engine_jobs").Put(ctx, "job-1", "RUNNING"); err != nil {
				t.Fatal(err)
			}
			check := func(n *stowage.Node) {
				t.Helper()
				_, err := stowage.GetMap(ctx, n, "engine_jobs", serde.String(), serde.Msgpack[int]())
				if !errors.Is(err, stowage.ErrCodecMismatch) || !strings.Contains(err.Error(), `"string string"`) ||
					!strings.Contains(err.Error(), `"string msgpack:int"`) {
					t.Fatalf("GetMap with other codecs: %v; want ErrCodecMismatch naming both", err)
				}
				raw, err := stowage.GetMap(ctx, n, "engine_jobs", serde.String(), serde.Bytes())
				if err != nil {
					t.Fatalf("a raw view: %v", err)
				}
				if v, ok, err := raw.Get(ctx, "job-1"); err != nil || !ok || string(v) != "RUNNING" {
					t.Fatalf("raw Get = %q, %v, %v", v, ok, err)
				}
				if v, ok, err := strMap(t, n, "engine_jobs").Get(ctx, "job-1"); err != nil || !ok || v != "RUNNING" {
					t.Fatalf("Get with the same codecs = %q, %v, %v", v, ok, err)
				}
			}
			check(n)
			if err := n.Close(); err != nil {
				t.Fatal(err)
			}
			n = open(t, stowage.Options{Config: cfg})
			defer n.Close()
			check(n)
			// Another map takes its own codecs; a memory map none.
			if _, err := stowage.GetMap(ctx, n, "engine_counts", serde.String(), serde.Msgpack[int]()); err != nil {
				t.Fatal(err)
			}
			if _, err := stowage.GetMap(ctx, n, "scratch", serde.String(), serde.Msgpack[int]()); err != nil {
				t.Fatal(err)
			}
			if _, err := stowage.GetMap(ctx, n, "scratch", serde.String(), serde.String()); err != nil {
				t.Fatalf("a memory map was checked: %v", err)
			}
		})
	}
}
