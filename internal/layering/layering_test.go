package layering_test

import (
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/stowage/stowage"

// layers gives each group of packages (by path below the module, "" for
// the root package alone) its layer: a package may import packages of a
// higher number, or of its own group.
var layers = map[string]int{
	"cmd":               0,
	"httpapi":           10,
	"bench":             10,
	"internal/testutil": 10,
	"internal/layering": 10,
	"":                  20,
	"internal/dmap":     30,
	"internal/testhook": 30,
	"backup":            40,
	"cluster":           50,
	"partition":         55,
	"mapstore":          60,
	"checkpoint":        60,
	"config":            70,
	"fsbackend":         80,
	"serde":             80,
	"internal/parallel": 90,
	"internal/latency":  90,
	"bench/sim":         10,
	"internal/logscrub": 90,
	"internal/mpack":    90,
	"internal/endctx":   90,
	"internal/prefault": 90,
}

// groupOf returns the group of a package path below the module: the
// longest key of layers that is the path or one of its parent folders.
func groupOf(rel string) (string, bool) {
	if rel == "" {
		return "", true
	}
	best, found := "", false
	for g := range layers {
		if g != "" && (rel == g || strings.HasPrefix(rel, g+"/")) && len(g) >= len(best) {
			best, found = g, true
		}
	}
	return best, found
}

type pkg struct {
	ImportPath string
	Imports    []string
}

func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func rel(path string) (string, bool) {
	if path == module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, module+"/")
	return r, ok
}

// TestImportsFlowDown fails when a package imports one of a higher layer
// (tests excluded: a black-box test may use any package).
func TestImportsFlowDown(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) < 20 {
		t.Fatalf("go list found %d packages of %s: not the whole module", len(pkgs), module)
	}
	for _, p := range pkgs {
		from, _ := rel(p.ImportPath)
		gFrom, ok := groupOf(from)
		if !ok {
			t.Errorf("package %s has no layer: add its group to layers", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			to, ok := rel(imp)
			if !ok {
				continue
			}
			gTo, ok := groupOf(to)
			if !ok {
				t.Errorf("package %s (imported by %s) has no layer", imp, p.ImportPath)
				continue
			}
			if gTo == gFrom {
				continue
			}
			if layers[gTo] <= layers[gFrom] {
				t.Errorf("%s (layer %q) imports %s (layer %q): imports must flow down", p.ImportPath, gFrom, imp, gTo)
			}
		}
	}
}

// TestGroupOf checks the check: a package below a group belongs to it,
// and the root package only to "".
func TestGroupOf(t *testing.T) {
	for rel, want := range map[string]string{
		"":                            "",
		"fsbackend/internal/objstore": "fsbackend",
		"internal/testutil/golden":    "internal/testutil",
		"mapstore/filestore":          "mapstore",
		"partition":                   "partition",
	} {
		if got, ok := groupOf(rel); !ok || got != want {
			t.Errorf("groupOf(%q) = %q, %v; want %q", rel, got, ok, want)
		}
	}
	if _, ok := groupOf("elsewhere"); ok {
		t.Error("a package outside every group has a group")
	}
	if layers["partition"] <= layers["cluster"] || layers["serde"] <= layers["mapstore"] {
		t.Error("layers out of order")
	}
}
