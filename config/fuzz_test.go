package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage/stowage/config"
)

// FuzzParse: Parse never panics, and whatever it accepts is valid and
// survives Dump and Parse again.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "testdata", "config", "*.yaml"))
	for _, fn := range files {
		b := readFixture(f, filepath.Base(fn))
		f.Add(b, []byte(nil))
		f.Add([]byte(nil), nest(b, "hazelcast"))
	}
	f.Add([]byte(secretST), []byte(secretHZ))
	f.Add([]byte("a: &a [*a]\n"), []byte("hazelcast:\n  map:\n    m: &m {<<: *m}\n"))
	f.Fuzz(func(t *testing.T, st, hz []byte) {
		c, err := config.Parse(st, hz)
		if err != nil {
			if c != nil {
				t.Fatal("a config with an error")
			}
			return
		}
		if err := c.Validate(); err != nil {
			t.Fatalf("Parse accepted what Validate refuses: %v", err)
		}
		_, _ = config.ParseClient(st)
		d1, d2, ok := strings.Cut(c.String(), "\n---\n")
		if !ok {
			t.Fatal("dump has no document separator")
		}
		if _, err := config.Parse([]byte(d1), []byte(d2)); err != nil {
			t.Fatalf("dump does not parse back: %v\n%s", err, c)
		}
	})
}
