package gcs_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cloud.google.com/go/storage"
	"github.com/fsouza/fake-gcs-server/fakestorage"
	"go.uber.org/goleak"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/gcs"
	"github.com/stowage/stowage/internal/latency"
)

// TestMain checks for leaked goroutines. opencensus (pulled in by the
// client library) starts a worker in its package init that never stops.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreTopFunction("go.opencensus.io/stats/view.(*worker).start"),
		// Idle keep-alive connections of the Google client library's own
		// HTTP transport, which its Close does not shut.
		goleak.IgnoreAnyFunction("net/http.(*persistConn).readLoop"),
		goleak.IgnoreAnyFunction("net/http.(*persistConn).writeLoop"))
}

const bucket = "stowage-test"

// faultTransport counts upload bytes and fails the next requests with 503.
type faultTransport struct {
	base        http.RoundTripper
	fail        atomic.Int64 // requests still to fail; < 0 means all
	faults      atomic.Int64
	uploadBytes atomic.Int64
	uploads     atomic.Int64
}

func (t *faultTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if n := t.fail.Load(); n != 0 {
		if n > 0 {
			t.fail.Add(-1)
		}
		t.faults.Add(1)
		if r.Body != nil {
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
		}
		body := `{"error":{"code":503,"message":"injected fault"}}`
		return &http.Response{StatusCode: 503, Status: "503 Service Unavailable", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Request: r}, nil
	}
	if strings.HasPrefix(r.URL.Path, "/upload/") && r.Body != nil {
		t.uploads.Add(1)
		r.Body = &countingBody{r.Body, &t.uploadBytes}
	}
	return t.base.RoundTrip(r)
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

type fixture struct {
	srv *fakestorage.Server
	tr  *faultTransport
	fs  *gcs.FS
	// lat delays the client's requests (none until its SetDelay) and
	// counts those in flight: the server has no listener to wrap.
	lat *latency.Model
}

// newFixture serves fake-gcs-server in process (no listener) and builds
// an FS on a client whose transport can inject faults.
func newFixture(t *testing.T, rp gcs.RetryPolicy, prefix string) *fixture {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{NoListener: true})
	if err != nil {
		t.Fatal(err)
	}
	srv.CreateBucket(bucket)
	lat := latency.New(0)
	tr := &faultTransport{base: lat.Transport(srv.HTTPClient().Transport)}
	client, err := storage.NewClient(context.Background(), option.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		t.Fatal(err)
	}
	if rp.BaseDelay == 0 {
		rp.BaseDelay, rp.MaxDelay = time.Millisecond, 4*time.Millisecond
	}
	f, err := gcs.New(context.Background(), gcs.Options{Bucket: bucket, Prefix: prefix, Client: client, Retry: rp})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close(); client.Close(); srv.Stop() })
	return &fixture{srv: srv, tr: tr, fs: f, lat: lat}
}

func (fx *fixture) object(t *testing.T, key string) ([]byte, bool) {
	o, err := fx.srv.GetObject(bucket, key)
	if err != nil {
		return nil, false
	}
	return o.Content, true
}

func TestContract(t *testing.T) {
	fx := newFixture(t, gcs.RetryPolicy{}, "root")
	f := fx.fs
	ctx := context.Background()
	if c := f.Capabilities(); c.DurableAppend || c.AtomicRename || !c.ConditionalCreate {
		t.Fatalf("capabilities %+v", c)
	}
	w, err := f.Create(ctx, "m/log/run1/1.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); !errors.Is(err, fsbackend.ErrUnsupported) {
		t.Fatalf("Sync: %v", err)
	}
	io.WriteString(w, "hello object store")
	if _, ok := fx.object(t, "root/m/log/run1/1.log"); ok {
		t.Fatal("visible before Close")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := fx.object(t, "root/m/log/run1/1.log"); string(got) != "hello object store" {
		t.Fatalf("stored %q", got)
	}
	if _, err := f.Create(ctx, "m/log/run1/1.log"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create existing: %v", err)
	}
	r, err := f.Open(ctx, "m/log/run1/1.log")
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 6)
	if n, err := r.ReadAt(buf, 6); n != 6 || err != nil || string(buf) != "object" {
		t.Fatalf("ReadAt %d %v %q", n, err, buf)
	}
	if n, err := r.ReadAt(buf, 15); n != 3 || err != io.EOF || string(buf[:n]) != "ore" {
		t.Fatalf("ReadAt tail %d %v %q", n, err, buf[:n])
	}
	if n, err := r.ReadAt(buf, 18); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt end %d %v", n, err)
	}
	r.Close()
	for _, n := range []string{"m/snap/2/10.snap", "m/snap/1/5.snap", "m/META", "other/x"} {
		if err := fsbackend.WriteFile(ctx, f, n, []byte(n)); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsbackend.WriteFile(ctx, f, "m/empty", nil); err != nil {
		t.Fatal(err)
	}
	if b, err := fsbackend.ReadFile(ctx, f, "m/empty"); err != nil || len(b) != 0 {
		t.Fatalf("empty: %q %v", b, err)
	}
	fx.srv.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: "root/m/placeholder/"}})
	fx.srv.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: "rootless"}, Content: []byte("x")})
	list, err := f.List(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range list {
		names = append(names, fi.Name)
	}
	if want := "m/META,m/empty,m/log/run1/1.log,m/snap/1/5.snap,m/snap/2/10.snap"; strings.Join(names, ",") != want {
		t.Fatalf("List = %v, want %s", names, want)
	}
	if all, _ := f.List(ctx, ""); len(all) != 6 {
		t.Fatalf("List root %v", all)
	}
	if none, err := f.List(ctx, "nothing"); err != nil || len(none) != 0 {
		t.Fatalf("List missing %v %v", none, err)
	}
	if fi, err := f.Stat(ctx, "m/META"); err != nil || fi.Size != 6 || fi.Name != "m/META" {
		t.Fatalf("Stat %+v %v", fi, err)
	}
	if _, err := f.Stat(ctx, "m/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat missing %v", err)
	}
	if _, err := f.Open(ctx, "m/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open missing %v", err)
	}
	if err := f.Rename(ctx, "m/snap/1/5.snap", "m/snap/2/10.snap"); err != nil {
		t.Fatal(err)
	}
	if b, _ := fsbackend.ReadFile(ctx, f, "m/snap/2/10.snap"); string(b) != "m/snap/1/5.snap" {
		t.Fatalf("rename did not replace: %q", b)
	}
	if _, err := f.Stat(ctx, "m/snap/1/5.snap"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("old name left: %v", err)
	}
	if err := f.Rename(ctx, "m/none", "m/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rename missing %v", err)
	}
	if err := f.Remove(ctx, "m/META"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove(ctx, "m/META"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("remove missing %v", err)
	}
	if err := fsbackend.WriteFileAtomic(ctx, f, "m/META", "t", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	w, _ = f.Create(ctx, "aborted")
	w.Write([]byte("x"))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, ok := fx.object(t, "root/aborted"); ok {
		t.Fatal("aborted writer stored its object")
	}
	for _, bad := range []string{"", "/abs", "a/../b", "a/"} {
		if _, err := f.Create(ctx, bad); !errors.Is(err, fsbackend.ErrInvalidName) {
			t.Errorf("Create(%q): %v", bad, err)
		}
	}
	f.Close()
	if _, err := f.Stat(ctx, "m/META"); !errors.Is(err, fsbackend.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

// TestDoesNotExistPrecondition checks that fake-gcs-server answers the
// DoesNotExist precondition with 412, and that two writers racing for one
// name end with exactly one winner.
func TestDoesNotExistPrecondition(t *testing.T) {
	fx := newFixture(t, gcs.RetryPolicy{}, "")
	ctx := context.Background()
	client := fx.srv.Client()
	defer client.Close()
	obj := client.Bucket(bucket).Object("direct")
	for i, want := range []int{0, http.StatusPreconditionFailed} {
		w := obj.If(storage.Conditions{DoesNotExist: true}).NewWriter(ctx)
		w.Write([]byte("x"))
		err := w.Close()
		var ge *googleapi.Error
		if got := 0; errors.As(err, &ge) {
			got = ge.Code
			if got != want {
				t.Fatalf("write %d: status %d, want %d", i, got, want)
			}
		} else if want != 0 || err != nil {
			t.Fatalf("write %d: %v, want status %d", i, err, want)
		}
	}

	w1, err1 := fx.fs.Create(ctx, "epoch/7")
	w2, err2 := fx.fs.Create(ctx, "epoch/7")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	w1.Write([]byte("one"))
	w2.Write([]byte("two"))
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, w := range []fsbackend.Writer{w1, w2} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = w.Close() }()
	}
	wg.Wait()
	won := -1
	for i, err := range errs {
		switch {
		case err == nil:
			if won >= 0 {
				t.Fatal("both writers won")
			}
			won = i
		case errors.Is(err, fs.ErrExist):
			[]fsbackend.Writer{w1, w2}[i].Abort()
		default:
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no winner")
	}
	if got, _ := fx.object(t, "epoch/7"); string(got) != []string{"one", "two"}[won] {
		t.Fatalf("object %q, winner %d", got, won)
	}
}

func TestReaderPinnedToGeneration(t *testing.T) {
	fx := newFixture(t, gcs.RetryPolicy{}, "")
	ctx := context.Background()
	fsbackend.WriteFile(ctx, fx.fs, "v", []byte("version one"))
	r, err := fx.fs.Open(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	fx.srv.CreateObject(fakestorage.Object{ObjectAttrs: fakestorage.ObjectAttrs{BucketName: bucket, Name: "v"}, Content: []byte("version two")})
	if _, err := r.ReadAt(make([]byte, 4), 0); err == nil {
		t.Fatal("read of a replaced generation succeeded")
	}
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	t.Run("503 for the first requests then success", func(t *testing.T) {
		fx := newFixture(t, gcs.RetryPolicy{}, "")
		for i, op := range []func() error{
			func() error { return fsbackend.WriteFile(ctx, fx.fs, "a", []byte("payload")) },
			func() error { _, err := fsbackend.ReadFile(ctx, fx.fs, "a"); return err },
			func() error { _, err := fx.fs.List(ctx, ""); return err },
			func() error { return fx.fs.Rename(ctx, "a", "b") },
			func() error { return fx.fs.Remove(ctx, "b") },
		} {
			before := fx.tr.faults.Load()
			fx.tr.fail.Store(3)
			if err := op(); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
			if got := fx.tr.faults.Load() - before; got != 3 {
				t.Fatalf("op %d: %d faults", i, got)
			}
		}
		if got, _ := fx.object(t, "a"); got != nil {
			t.Fatalf("rename left the source")
		}
	})
	t.Run("failing forever with a short deadline", func(t *testing.T) {
		fx := newFixture(t, gcs.RetryPolicy{Deadline: 150 * time.Millisecond}, "")
		w, err := fx.fs.Create(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("x"))
		fx.tr.fail.Store(-1)
		err = w.Close()
		if err == nil || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want a deadline error, got %v", err)
		}
		if fx.tr.faults.Load() < 2 {
			t.Fatalf("only %d attempts", fx.tr.faults.Load())
		}
		fx.tr.fail.Store(0)
		w.Abort()
		if _, err := fx.fs.Stat(ctx, "a"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("failed write left an object: %v", err)
		}
	})
	t.Run("attempts run out", func(t *testing.T) {
		fx := newFixture(t, gcs.RetryPolicy{MaxAttempts: 2}, "")
		fx.tr.fail.Store(-1)
		if _, err := fx.fs.Stat(ctx, "a"); err == nil || errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("want a server error, got %v", err)
		}
		if got := fx.tr.faults.Load(); got != 2 {
			t.Fatalf("%d attempts, want 2", got)
		}
	})
}

// TestBytesPerNewByte: every batch is one new object, so the bytes sent
// per batch do not depend on what was written before, and the ratio of
// bytes sent to bytes of new data stays near 1 (the difference is the
// upload request's JSON metadata).
func TestBytesPerNewByte(t *testing.T) {
	fx := newFixture(t, gcs.RetryPolicy{}, "")
	ctx := context.Background()
	batch := bytes.Repeat([]byte("r"), 64<<10)
	var written int64
	var first int64
	for i := range 30 {
		before := fx.tr.uploadBytes.Load()
		if err := fsbackend.WriteFile(ctx, fx.fs, fmt.Sprintf("log/run/%06d.log", i), batch); err != nil {
			t.Fatal(err)
		}
		written += int64(len(batch))
		d := fx.tr.uploadBytes.Load() - before
		if i == 0 {
			first = d
		}
		if d < int64(len(batch)) || d > first+64 {
			t.Fatalf("batch %d: %d bytes sent for %d new bytes (first batch %d)", i, d, len(batch), first)
		}
	}
	ratio := float64(fx.tr.uploadBytes.Load()) / float64(written)
	t.Logf("bytes sent per byte of new data: %.4f over %d uploads", ratio, fx.tr.uploads.Load())
	if ratio < 1 || ratio > 1.02 {
		t.Fatalf("ratio %.4f", ratio)
	}
}

// startListening serves fake-gcs-server on 127.0.0.1 for the properties
// path, which reaches it through STORAGE_EMULATOR_HOST or
// fs.gs.storage.root.url.
func startListening(t *testing.T) *fakestorage.Server {
	t.Helper()
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	srv.CreateBucket(bucket)
	t.Cleanup(srv.Stop)
	return srv
}

// writeKeyFile writes a syntactically valid service account key with a
// fresh RSA key and returns its path and private key PEM.
func writeKeyFile(t *testing.T) (string, string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: must(x509.MarshalPKCS8PrivateKey(k))}))
	data, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "p", "private_key_id": "kid-secret-0123",
		"private_key": pemKey, "client_email": "sa@p.iam.gserviceaccount.com", "client_id": "1",
		"token_uri": "http://127.0.0.1:1/token",
	})
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, pemKey
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestProperties(t *testing.T) {
	srv := startListening(t)
	host := strings.TrimPrefix(srv.URL(), "http://")
	keyFile, _ := writeKeyFile(t)
	notJSON := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(notJSON, []byte("PRIVATE-MATERIAL-not-json"), 0o600)
	wrongType := filepath.Join(t.TempDir(), "type.json")
	os.WriteFile(wrongType, []byte(`{"type":"api_key","key":"PRIVATE-MATERIAL"}`), 0o600)

	base := func(kv ...string) fsbackend.Properties {
		p := fsbackend.Properties{"storage.type": "gcs", "gcs.bucket": "gs://" + bucket + "/ns", "fs.gs.project.id": "p", "disable.cache": "true"}
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == "" {
				delete(p, kv[i])
			} else {
				p[kv[i]] = kv[i+1]
			}
		}
		return p
	}
	tests := []struct {
		name    string
		env     map[string]string
		props   fsbackend.Properties
		use     bool     // write and read a file
		wantErr []string // substrings; none means success
	}{
		{name: "emulator host", env: map[string]string{"STORAGE_EMULATOR_HOST": host}, props: base(), use: true},
		{name: "emulator host with cache", env: map[string]string{"STORAGE_EMULATOR_HOST": host}, props: base("disable.cache", "false"), use: true},
		{name: "root url unauthenticated", props: base("fs.gs.storage.root.url", srv.URL(), "fs.gs.auth.type", "UNAUTHENTICATED"), use: true},
		{name: "move disabled explicitly", env: map[string]string{"STORAGE_EMULATOR_HOST": host}, props: base("fs.gs.operation.move.enable", "false", "fs.gs.outputstream.type", "BASIC"), use: true},
		{name: "key file", props: base("fs.gs.auth.service.account.json.keyfile", keyFile)},
		{name: "application default credentials file", env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": keyFile}, props: base()},
		{name: "key file unreadable", props: base("fs.gs.auth.service.account.json.keyfile", "/nonexistent/key.json"),
			wantErr: []string{"fs.gs.auth.service.account.json.keyfile", "/nonexistent/key.json"}},
		{name: "key file not JSON", props: base("fs.gs.auth.service.account.json.keyfile", notJSON),
			wantErr: []string{"fs.gs.auth.service.account.json.keyfile", "not a JSON credentials file"}},
		{name: "key file of unknown type", props: base("fs.gs.auth.service.account.json.keyfile", wrongType),
			wantErr: []string{"fs.gs.auth.service.account.json.keyfile", "api_key"}},
		{name: "application default credentials file missing", env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": "/nonexistent/adc.json"}, props: base(),
			wantErr: []string{"GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/adc.json"}},
		{name: "unknown auth type", props: base("fs.gs.auth.type", "MAGIC"), wantErr: []string{"fs.gs.auth.type", "MAGIC", "UNAUTHENTICATED"}},
		{name: "unauthenticated with key file", props: base("fs.gs.auth.type", "UNAUTHENTICATED", "fs.gs.auth.service.account.json.keyfile", keyFile),
			wantErr: []string{"contradicts"}},
		{name: "bucket without gs scheme", props: base("gcs.bucket", bucket), wantErr: []string{"gcs.bucket", "gs://"}},
		{name: "bucket with wrong scheme", props: base("gcs.bucket", "s3://"+bucket), wantErr: []string{"gcs.bucket"}},
		{name: "bucket missing", props: base("gcs.bucket", ""), wantErr: []string{"gcs.bucket", "required"}},
		{name: "bad move flag", props: base("fs.gs.operation.move.enable", "sometimes"), wantErr: []string{"fs.gs.operation.move.enable"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("STORAGE_EMULATOR_HOST", "")
			t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			ctx := context.Background()
			f, err := fsbackend.Open(ctx, tc.props)
			if err == nil {
				defer f.Close()
				if tc.use {
					name := strings.ReplaceAll(tc.name, " ", "-")
					if err = fsbackend.WriteFile(ctx, f, name, []byte(tc.name)); err == nil {
						var b []byte
						b, err = fsbackend.ReadFile(ctx, f, name)
						if err == nil && string(b) != tc.name {
							err = fmt.Errorf("read back %q", b)
						}
						if err == nil {
							err = f.Rename(ctx, name, name+".renamed")
						}
					}
					if _, gerr := srv.GetObject(bucket, "ns/"+name+".renamed"); err == nil && gerr != nil {
						t.Fatalf("object not under the bucket prefix: %v", gerr)
					}
				}
			}
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want error with %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "PRIVATE") {
				t.Fatalf("error shows key file contents: %v", err)
			}
		})
	}
	gcs.PurgeClientCache()
}

// TestSecretsNeverAppear collects logs and errors of a run with a key file
// and failures and checks that no part of the key appears.
func TestSecretsNeverAppear(t *testing.T) {
	var mu sync.Mutex
	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })
	t.Setenv("STORAGE_EMULATOR_HOST", "")
	keyFile, pemKey := writeKeyFile(t)
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")

	ctx := context.Background()
	var out []string
	p := fsbackend.Properties{"storage.type": "gcs", "gcs.bucket": "gs://" + bucket, "disable.cache": "true",
		"fs.gs.auth.service.account.json.keyfile": keyFile}
	out = append(out, p.String())
	f, err := fsbackend.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	// The token endpoint in the key file is a closed port: every call fails.
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	_, err = f.Stat(cctx, "x")
	cancel()
	if err == nil {
		t.Fatal("stat without a reachable token endpoint succeeded")
	}
	out = append(out, err.Error(), fmt.Sprintf("%+v", err))
	f.Close()
	for _, bad := range []string{"/nonexistent", keyFile + ".missing"} {
		_, err := fsbackend.Open(ctx, fsbackend.Properties{"storage.type": "gcs", "gcs.bucket": "gs://b", "fs.gs.auth.service.account.json.keyfile": bad})
		out = append(out, fmt.Sprint(err))
	}
	mu.Lock()
	all := logs.String() + strings.Join(out, "\n")
	mu.Unlock()
	if !strings.Contains(all, "opening") {
		t.Fatalf("no logs collected:\n%s", all)
	}
	body := strings.Split(strings.TrimSpace(pemKey), "\n")[1]
	for _, s := range []string{body, "kid-secret-0123", "PRIVATE KEY"} {
		if strings.Contains(all, s) {
			t.Fatalf("key material %q… appears in output:\n%s", s[:8], all)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
