package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/httpapi"
)

// node opens a member alone whose maps named engine* are persisted under
// dir, and serves its HTTP API.
func node(t *testing.T, dir string) (*stowage.Node, *httptest.Server) {
	t.Helper()
	n := openNode(t, dir)
	srv := httptest.NewServer(httpapi.Handler(n))
	t.Cleanup(srv.Close)
	return n, srv
}

// openNode opens a member alone whose maps named engine* are persisted
// under dir; it is closed when the test ends.
func openNode(t testing.TB, dir string) *stowage.Node {
	t.Helper()
	y := `hazelcast:
  cluster-name: test
  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: EAGER
        properties:
          type: hdfs
          namespace: ` + dir + `
          clusterName: test
          storage.type: hdfs
          fs.defaultFS: file:///
`
	cfg, err := config.Parse(nil, []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	n, err := stowage.Open(context.Background(), stowage.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	return n
}

func do(t *testing.T, method, url, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// files lists every file and directory under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestMapNameLimits(t *testing.T) {
	dir := t.TempDir()
	n, srv := node(t, dir)
	before := files(t, dir)
	for _, tc := range []struct{ name, want string }{
		{"engine" + strings.Repeat("x", 255-6), "the limit is 200"},
		{"engine" + strings.Repeat("x", 256-6), "the limit is 200"},
		{"engine" + strings.Repeat("x", 1000-6), "the limit is 200"},
		{"engine\x01ctl", "control character"},
		{"engine\x7f", "control character"},
		{".stowage-members", "starts with a dot"},
	} {
		for _, method := range []string{http.MethodPut, http.MethodGet, http.MethodDelete} {
			code, body := do(t, method, srv.URL+"/v1/maps/"+url.PathEscape(tc.name)+"/entries/k", "v")
			if code != http.StatusBadRequest || !strings.Contains(body, tc.want) {
				t.Errorf("%s of map %.20q...: %d %s; want 400 naming %q", method, tc.name, code, body, tc.want)
			}
			if strings.Contains(body, dir) {
				t.Errorf("%s of map %.20q...: the answer names a server path: %s", method, tc.name, body)
			}
		}
	}
	// The longest name allowed works.
	ok := "engine" + strings.Repeat("y", stowage.MaxMapNameLen-6)
	if code, body := do(t, http.MethodPut, srv.URL+"/v1/maps/"+ok+"/entries/k", "v"); code != http.StatusNoContent {
		t.Fatalf("PUT to a map of %d bytes: %d %s", len(ok), code, body)
	}
	// Nothing of the refused names reached the disk or the node.
	after := files(t, dir)
	for _, f := range after {
		if f != "/test" && !strings.Contains(f, ok) && !strings.Contains(f, ".stowage") && !contains(before, f) {
			t.Errorf("a refused name left %s on disk", f)
		}
	}
	if maps := n.Maps(); len(maps) != 1 || maps[0].Name != ok {
		t.Errorf("maps held after refused names: %+v", maps)
	}
}

func TestReadsCreateNothing(t *testing.T) {
	dir := t.TempDir()
	n, srv := node(t, dir)
	if code, body := do(t, http.MethodPut, srv.URL+"/v1/maps/engineReal/entries/k", "v"); code != http.StatusNoContent {
		t.Fatalf("PUT: %d %s", code, body)
	}
	before := files(t, dir)
	for i := range 50 {
		name := "engineGhost" + string(rune('a'+i%26)) + strings.Repeat("z", i)
		for _, path := range []string{"/entries/k", "/entries", ""} {
			code, body := do(t, http.MethodGet, srv.URL+"/v1/maps/"+name+path, "")
			if code != http.StatusNotFound {
				t.Fatalf("GET %s%s of a map that does not exist: %d %s, want 404", name, path, code, body)
			}
		}
		if code, _ := do(t, http.MethodHead, srv.URL+"/v1/maps/"+name+"/entries/k", ""); code != http.StatusNotFound {
			t.Fatalf("HEAD of a key of a map that does not exist: %d, want 404", code)
		}
		if code, body := do(t, http.MethodGet, srv.URL+"/v1/maps/"+name+"/locks/k", ""); code != http.StatusOK || !strings.Contains(strings.Join(strings.Fields(body), ""), `"locked":false`) {
			t.Fatalf("GET of a lock of a map that does not exist: %d %s, want 200 and not locked", code, body)
		}
	}
	if got := files(t, dir); len(got) != len(before) {
		t.Errorf("reads of maps that do not exist left files: %d before, %d after", len(before), len(got))
	}
	if maps := n.Maps(); len(maps) != 1 {
		t.Errorf("reads of maps that do not exist made maps in memory: %d held", len(maps))
	}
	// A map that exists still reads, lists and describes.
	if code, body := do(t, http.MethodGet, srv.URL+"/v1/maps/engineReal/entries/k", ""); code != http.StatusOK || body != "v" {
		t.Fatalf("GET of a written key: %d %q", code, body)
	}
	code, body := do(t, http.MethodGet, srv.URL+"/v1/maps/engineReal", "")
	var mi struct {
		Name string `json:"name"`
		Size int    `json:"size"`
	}
	if code != http.StatusOK || json.Unmarshal([]byte(body), &mi) != nil || mi.Size != 1 || mi.Name != "engineReal" {
		t.Fatalf("GET of a map: %d %s", code, body)
	}
	if code, _ := do(t, http.MethodGet, srv.URL+"/v1/maps/engineReal/entries/absent", ""); code != http.StatusNotFound {
		t.Fatalf("GET of an absent key: %d, want 404", code)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// A store error names the server's files; the answer names them without
// the server's path.
func TestErrorsNameNoServerPath(t *testing.T) {
	dir := t.TempDir()
	_, srv := node(t, dir)
	// A file where the map's directory would be: opening the map's store
	// fails, with the operating system naming the absolute path.
	if err := os.MkdirAll(filepath.Join(dir, "test"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "test", "engineBlocked"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, body := do(t, http.MethodPut, srv.URL+"/v1/maps/engineBlocked/entries/k", "v")
	if code < 500 {
		t.Fatalf("PUT onto a blocked map directory: %d %s, want a server error", code, body)
	}
	if strings.Contains(body, dir) {
		t.Fatalf("the answer names the server's path: %s", body)
	}
	if !strings.Contains(body, "engineBlocked") {
		t.Fatalf("the answer does not name the map or its file: %s", body)
	}
}
