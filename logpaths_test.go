package stowage_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/errorfs"
	"github.com/stowage/stowage/httpapi"
	"github.com/stowage/stowage/internal/testhook"
)

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The local back end's errors name the absolute path of the file they
// failed on. An HTTP answer carrying such an error, and a line of the
// node's log at Info or above, name the file by its last elements only,
// not by where the data is kept.
func TestLogLinesNameNoServerPath(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var fail sync.Map // "on" → true while armed
	inj := errorfs.InjectorFunc(func(c errorfs.Call) error {
		if _, on := fail.Load("on"); !on || (c.Op != errorfs.OpSync && c.Op != errorfs.OpClose) {
			return nil
		}
		return &fs.PathError{Op: string(c.Op), Path: filepath.Join(dir, filepath.FromSlash(c.Name)), Err: syscall.ENOSPC}
	})
	openFS := func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) {
		f, err := fsbackend.Open(ctx, p)
		if err != nil {
			return nil, err
		}
		return errorfs.Wrap(f, inj), nil
	}
	var logs syncBuffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	n := open(t, stowage.Options{Config: persisted(t, dir, ""), Logger: log, TestHooks: &testhook.Hooks{OpenFS: openFS}})
	m := strMap(t, n, "engine_logpaths")
	if err := m.Put(ctx, "job", "v1"); err != nil {
		t.Fatal(err)
	}
	fail.Store("on", true)
	if err := m.Put(ctx, "job", "v2"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Put with a full disk: %v, want ENOSPC", err)
	}
	srv := httptest.NewServer(httpapi.Handler(n))
	req, _ := http.NewRequest(http.MethodPut, srv.URL+"/v1/maps/engine_logpaths/entries/job", strings.NewReader("v3"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	srv.Close()
	if resp.StatusCode/100 != 5 || !strings.Contains(string(body), "no space left on device") || strings.Contains(string(body), dir) {
		t.Errorf("HTTP PUT on a full disk: %s %s; want a 5xx naming the error but not %s", resp.Status, body, dir)
	}
	n.Close()
	out := logs.String()
	if !strings.Contains(out, "no space left on device") {
		t.Fatalf("the failing close was not logged at Info or above:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, dir) {
			t.Errorf("log line names the server's data directory %s:\n%s", dir, line)
		}
	}
}
