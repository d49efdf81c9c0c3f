package oss_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/oss"
	"github.com/stowage/stowage/internal/testutil/ossserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	testID     = "LTAI5tTestAccessKey"
	testSecret = "Sup3rS3cretValue-do-not-print"
	testToken  = "STS.token-value-do-not-print"
	bucket     = "stowage-test"
	// stsID goes with testToken; unknownID is no key the server knows.
	stsID     = "STS.NTempAccessKeyId01"
	unknownID = "LTAI5tUnknownKeyId99"
)

func newServer(t *testing.T) *ossserver.Server {
	t.Helper()
	srv := ossserver.New(ossserver.Options{
		Credentials: []ossserver.Credential{
			{AccessKeyID: testID, AccessKeySecret: testSecret},
			{AccessKeyID: stsID, AccessKeySecret: testSecret, SecurityToken: testToken},
		},
		Buckets: []string{bucket},
	})
	t.Cleanup(srv.Close)
	return srv
}

func props(srv *ossserver.Server, extra ...string) fsbackend.Properties {
	p := fsbackend.Properties{
		"storage.type":           "oss",
		"oss.bucket":             "oss://" + bucket + "/root",
		"fs.oss.endpoint":        srv.Endpoint(),
		"fs.oss.accessKeyId":     testID,
		"fs.oss.accessKeySecret": testSecret,
		"disable.cache":          "true",
	}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(p, extra[i])
		} else {
			p[extra[i]] = extra[i+1]
		}
	}
	return p
}

func open(t *testing.T, p fsbackend.Properties) fsbackend.FS {
	t.Helper()
	f, err := fsbackend.Open(context.Background(), p)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// fastFS builds an FS with New and a quick retry policy.
func fastFS(t *testing.T, srv *ossserver.Server, rp oss.RetryPolicy) *oss.FS {
	t.Helper()
	if rp.BaseDelay == 0 {
		rp.BaseDelay, rp.MaxDelay = time.Millisecond, 4*time.Millisecond
	}
	f, err := oss.New(context.Background(), oss.Options{
		Endpoint: srv.Endpoint(), Bucket: bucket, Prefix: "fast",
		Credentials:  oss.Credentials{AccessKeyID: testID, AccessKeySecret: testSecret},
		Retry:        rp,
		DisableCache: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestContract(t *testing.T) {
	srv := newServer(t)
	f := open(t, props(srv))
	ctx := context.Background()

	if c := f.Capabilities(); c.DurableAppend || c.AtomicRename || !c.ConditionalCreate {
		t.Fatalf("capabilities %+v", c)
	}
	w, err := f.Create(ctx, "m/log/run1/1.log")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Sync(); !errors.Is(err, fsbackend.ErrUnsupported) {
		t.Fatalf("Sync: want ErrUnsupported, got %v", err)
	}
	io.WriteString(w, "hello ")
	io.WriteString(w, "object store")
	if _, ok := srv.Object(bucket, "root/m/log/run1/1.log"); ok {
		t.Fatal("object visible before Close")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, _ := srv.Object(bucket, "root/m/log/run1/1.log"); string(got) != "hello object store" {
		t.Fatalf("stored %q", got)
	}
	if _, err := f.Create(ctx, "m/log/run1/1.log"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Create existing: want ErrExist, got %v", err)
	}
	if err := fsbackend.WriteFile(ctx, f, "m/log/run1/1.log", []byte("x")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("WriteFile existing: want ErrExist, got %v", err)
	}

	r, err := f.Open(ctx, "m/log/run1/1.log")
	if err != nil {
		t.Fatal(err)
	}
	if r.Size() != 18 {
		t.Fatalf("size %d", r.Size())
	}
	buf := make([]byte, 6)
	if n, err := r.ReadAt(buf, 6); n != 6 || err != nil || string(buf) != "object" {
		t.Fatalf("ReadAt: %d %v %q", n, err, buf)
	}
	if n, err := r.ReadAt(buf, 15); n != 3 || err != io.EOF || string(buf[:n]) != "ore" {
		t.Fatalf("ReadAt at tail: %d %v %q", n, err, buf[:n])
	}
	if n, err := r.ReadAt(buf, 18); n != 0 || err != io.EOF {
		t.Fatalf("ReadAt at end: %d %v", n, err)
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
		t.Fatalf("empty file: %q %v", b, err)
	}
	srv.PutRaw(bucket, "root/m/dir-marker/", nil) // made by another tool
	srv.PutRaw(bucket, "rootless", []byte("outside the root"))
	list, err := f.List(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range list {
		names = append(names, fi.Name)
	}
	if want := "m/META,m/empty,m/log/run1/1.log,m/snap/1/5.snap,m/snap/2/10.snap"; strings.Join(names, ",") != want {
		t.Fatalf("List(m) = %v, want %s", names, want)
	}
	if all, _ := f.List(ctx, ""); len(all) != 6 {
		t.Fatalf("List root: %v", all)
	}
	if none, err := f.List(ctx, "nothing/here"); err != nil || len(none) != 0 {
		t.Fatalf("List missing dir: %v %v", none, err)
	}
	fi, err := f.Stat(ctx, "m/META")
	if err != nil || fi.Size != 6 || fi.Name != "m/META" || fi.ModTime.IsZero() {
		t.Fatalf("Stat: %+v %v", fi, err)
	}
	if _, err := f.Stat(ctx, "m/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Stat missing: %v", err)
	}
	if _, err := f.Open(ctx, "m/none"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Open missing: %v", err)
	}

	if err := f.Rename(ctx, "m/snap/1/5.snap", "m/snap/2/10.snap"); err != nil {
		t.Fatal(err)
	}
	if b, _ := fsbackend.ReadFile(ctx, f, "m/snap/2/10.snap"); string(b) != "m/snap/1/5.snap" {
		t.Fatalf("rename did not replace: %q", b)
	}
	if _, err := f.Stat(ctx, "m/snap/1/5.snap"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rename left the old name: %v", err)
	}
	if err := f.Rename(ctx, "m/none", "m/x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("rename missing: %v", err)
	}
	if err := f.Remove(ctx, "m/META"); err != nil {
		t.Fatal(err)
	}
	if err := f.Remove(ctx, "m/META"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("remove missing: %v", err)
	}
	if err := fsbackend.WriteFileAtomic(ctx, f, "m/META", "t1", []byte("v2")); err != nil {
		t.Fatal(err)
	}
	if b, _ := fsbackend.ReadFile(ctx, f, "m/META"); string(b) != "v2" {
		t.Fatalf("WriteFileAtomic: %q", b)
	}
	for _, bad := range []string{"", "/abs", "a/../b", "a//b", "a/"} {
		if _, err := f.Create(ctx, bad); !errors.Is(err, fsbackend.ErrInvalidName) {
			t.Errorf("Create(%q): want ErrInvalidName, got %v", bad, err)
		}
	}
	sub, err := fsbackend.Sub(f, "m/snap")
	if err != nil {
		t.Fatal(err)
	}
	if l, _ := sub.List(ctx, ""); len(l) != 1 || l[0].Name != "2/10.snap" {
		t.Fatalf("Sub list %v", l)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(ctx, "m/META"); !errors.Is(err, fsbackend.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestAbortLeavesNothing(t *testing.T) {
	srv := newServer(t)
	f := open(t, props(srv))
	w, err := f.Create(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("data"))
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if st := srv.Stats(); st.PutRequests != 0 || len(srv.Keys(bucket)) != 0 {
		t.Fatalf("aborted writer stored something: %+v %v", st, srv.Keys(bucket))
	}
	if _, err := w.Write([]byte("x")); !errors.Is(err, fsbackend.ErrClosed) {
		t.Fatalf("write after abort: %v", err)
	}
}

// TestConditionalCreateRace: two writers pass Create's existence check;
// forbid-overwrite lets exactly one Close win, and the loser's Abort does
// not delete the winner's object.
func TestConditionalCreateRace(t *testing.T) {
	srv := newServer(t)
	f := open(t, props(srv))
	ctx := context.Background()
	w1, err1 := f.Create(ctx, "epoch/7")
	w2, err2 := f.Create(ctx, "epoch/7")
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	w1.Write([]byte("one"))
	w2.Write([]byte("two"))
	var wg sync.WaitGroup
	errs := make([]error, 2)
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
				t.Fatal("both writers created the object")
			}
			won = i
		case errors.Is(err, fs.ErrExist):
			if err := []fsbackend.Writer{w1, w2}[i].Abort(); err != nil {
				t.Fatal(err)
			}
		default:
			t.Fatalf("writer %d: %v", i, err)
		}
	}
	if won < 0 {
		t.Fatal("no writer won")
	}
	got, ok := srv.Object(bucket, "root/epoch/7")
	if want := []string{"one", "two"}[won]; !ok || string(got) != want {
		t.Fatalf("object %q (exists %v), want winner's %q", got, ok, want)
	}
}

func TestReaderPinnedToVersion(t *testing.T) {
	srv := newServer(t)
	f := open(t, props(srv))
	ctx := context.Background()
	fsbackend.WriteFile(ctx, f, "v", []byte("version one"))
	r, err := f.Open(ctx, "v")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	srv.PutRaw(bucket, "root/v", []byte("version two"))
	_, err = r.ReadAt(make([]byte, 4), 0)
	if err == nil || !strings.Contains(err.Error(), "replaced") {
		t.Fatalf("read after replacement: want a 'replaced' error, got %v", err)
	}
}

func TestListPaginates(t *testing.T) {
	srv := newServer(t)
	f := open(t, props(srv))
	const n = 2345
	for i := range n {
		srv.PutRaw(bucket, fmt.Sprintf("root/big/%05d", n-i), []byte("x"))
	}
	before := srv.Stats().Requests
	list, err := f.List(context.Background(), "big")
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != n {
		t.Fatalf("listed %d of %d", len(list), n)
	}
	for i := 1; i < len(list); i++ {
		if list[i-1].Name >= list[i].Name {
			t.Fatalf("not sorted at %d: %s %s", i, list[i-1].Name, list[i].Name)
		}
	}
	if reqs := srv.Stats().Requests - before; reqs != 3 {
		t.Fatalf("want 3 list pages, made %d requests", reqs)
	}
}

func TestCredentials(t *testing.T) {
	srv := newServer(t)
	tests := []struct {
		name    string
		env     map[string]string
		props   []string // key, value pairs over props(srv); "" value deletes
		wantErr []string // substrings of the error; none means success
	}{
		{name: "static", props: nil},
		{name: "static with Hadoop provider class", props: []string{"fs.oss.credentials.provider", oss.ProviderStatic}},
		{name: "static with security token", props: []string{"fs.oss.accessKeyId", stsID, "fs.oss.securityToken", testToken}},
		{
			name:  "environment",
			env:   map[string]string{"OSS_ACCESS_KEY_ID": testID, "OSS_ACCESS_KEY_SECRET": testSecret},
			props: []string{"fs.oss.accessKeyId", "", "fs.oss.accessKeySecret", "", "fs.oss.credentials.provider", oss.ProviderEnvironment},
		},
		{
			name:  "environment with session token",
			env:   map[string]string{"OSS_ACCESS_KEY_ID": stsID, "OSS_ACCESS_KEY_SECRET": testSecret, "OSS_SESSION_TOKEN": testToken},
			props: []string{"fs.oss.accessKeyId", "", "fs.oss.accessKeySecret", "", "fs.oss.credentials.provider", oss.ProviderEnvironment},
		},
		{
			name:    "environment variables missing",
			env:     map[string]string{"OSS_ACCESS_KEY_ID": "", "OSS_ACCESS_KEY_SECRET": ""},
			props:   []string{"fs.oss.accessKeyId", "", "fs.oss.accessKeySecret", "", "fs.oss.credentials.provider", oss.ProviderEnvironment},
			wantErr: []string{"OSS_ACCESS_KEY_ID", "OSS_ACCESS_KEY_SECRET", "not set"},
		},
		{
			name:    "environment secret missing",
			env:     map[string]string{"OSS_ACCESS_KEY_ID": testID, "OSS_ACCESS_KEY_SECRET": ""},
			props:   []string{"fs.oss.accessKeyId", "", "fs.oss.accessKeySecret", "", "fs.oss.credentials.provider", oss.ProviderEnvironment},
			wantErr: []string{"OSS_ACCESS_KEY_SECRET"},
		},
		{
			name:    "unknown provider",
			props:   []string{"fs.oss.credentials.provider", "com.example.MyProvider"},
			wantErr: []string{"fs.oss.credentials.provider", "com.example.MyProvider", oss.ProviderEnvironment, oss.ProviderStatic},
		},
		{
			name:    "environment provider and static keys",
			props:   []string{"fs.oss.credentials.provider", oss.ProviderEnvironment},
			wantErr: []string{"contradicts", "fs.oss.accessKeyId"},
		},
		{name: "no credentials", props: []string{"fs.oss.accessKeyId", "", "fs.oss.accessKeySecret", ""}, wantErr: []string{"no credentials", "fs.oss.accessKeyId"}},
		{name: "secret missing", props: []string{"fs.oss.accessKeySecret", ""}, wantErr: []string{"fs.oss.accessKeySecret"}},
		{name: "bucket without scheme", props: []string{"oss.bucket", bucket}, wantErr: []string{"oss.bucket", "oss://"}},
		{name: "bucket with s3 scheme", props: []string{"oss.bucket", "s3a://" + bucket}, wantErr: []string{"oss.bucket"}},
		{name: "bucket missing", props: []string{"oss.bucket", ""}, wantErr: []string{"oss.bucket", "required"}},
		{name: "endpoint missing", props: []string{"fs.oss.endpoint", ""}, wantErr: []string{"fs.oss.endpoint"}},
		{name: "bad attempts", props: []string{"fs.oss.attempts.maximum", "zero"}, wantErr: []string{"fs.oss.attempts.maximum"}},
		{name: "bad disable.cache", props: []string{"disable.cache", "perhaps"}, wantErr: []string{"disable.cache"}},
		{name: "other fs.oss keys pass through", props: []string{"fs.oss.connection.timeout", "200000"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			f, err := fsbackend.Open(context.Background(), props(srv, tc.props...))
			if err == nil {
				defer f.Close()
				err = fsbackend.WriteFile(context.Background(), f, "cred/"+tc.name, []byte("ok"))
			}
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatalf("want success, got %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("want an error with %q", tc.wantErr)
			}
			for _, w := range tc.wantErr {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), testToken) {
				t.Fatalf("error shows a secret: %v", err)
			}
		})
	}
}

func TestWrongSecretIsRejected(t *testing.T) {
	srv := newServer(t)
	const wrong = "WrongSecret-also-secret"
	for _, env := range []bool{false, true} {
		p := props(srv, "fs.oss.accessKeySecret", wrong)
		if env {
			t.Setenv("OSS_ACCESS_KEY_ID", testID)
			t.Setenv("OSS_ACCESS_KEY_SECRET", wrong)
			p = props(srv, "fs.oss.accessKeyId", "", "fs.oss.accessKeySecret", "", "fs.oss.credentials.provider", oss.ProviderEnvironment)
		}
		f := open(t, p)
		before := srv.Stats().AuthFailures
		err := fsbackend.WriteFile(context.Background(), f, "x", []byte("x"))
		if err == nil {
			t.Fatal("write with a wrong secret succeeded")
		}
		if !strings.Contains(err.Error(), "SignatureDoesNotMatch") || !strings.Contains(err.Error(), "secret is wrong") {
			t.Fatalf("unclear error: %v", err)
		}
		if strings.Contains(err.Error(), wrong) || strings.Contains(err.Error(), testSecret) {
			t.Fatalf("error shows the secret: %v", err)
		}
		if srv.Stats().AuthFailures <= before {
			t.Fatal("server saw no signature failure")
		}
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, fs.ErrExist) {
			t.Fatalf("auth failure must not look like a missing or existing file: %v", err)
		}
	}
	if len(srv.Keys(bucket)) != 0 {
		t.Fatalf("objects stored with a wrong secret: %v", srv.Keys(bucket))
	}
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	t.Run("503 for the first requests then success", func(t *testing.T) {
		srv := newServer(t)
		f := fastFS(t, srv, oss.RetryPolicy{MaxAttempts: 5})
		for i, op := range []func() error{
			func() error { return fsbackend.WriteFile(ctx, f, "a", []byte("payload")) },
			func() error { _, err := fsbackend.ReadFile(ctx, f, "a"); return err },
			func() error { _, err := f.List(ctx, ""); return err },
			func() error { return f.Rename(ctx, "a", "b") },
			func() error { return f.Remove(ctx, "b") },
		} {
			before := srv.Stats().Faults
			srv.FailNext(3, 0)
			if err := op(); err != nil {
				t.Fatalf("op %d: %v", i, err)
			}
			if got := srv.Stats().Faults - before; got != 3 {
				t.Fatalf("op %d: %d faults seen", i, got)
			}
		}
	})
	t.Run("attempts run out", func(t *testing.T) {
		srv := newServer(t)
		f := open(t, props(srv, "fs.oss.attempts.maximum", "2"))
		srv.FailNext(-1, 0)
		err := fsbackend.WriteFile(ctx, f, "a", []byte("x"))
		if err == nil || !strings.Contains(err.Error(), "after 2 attempts") {
			t.Fatalf("want failure after 2 attempts, got %v", err)
		}
		if st := srv.Stats(); st.Faults != 2 || st.PutRequests != 0 {
			t.Fatalf("stats %+v", st)
		}
	})
	t.Run("failing forever with a short deadline", func(t *testing.T) {
		srv := newServer(t)
		f := fastFS(t, srv, oss.RetryPolicy{MaxAttempts: 1 << 30, Deadline: 150 * time.Millisecond})
		w, err := f.Create(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("x"))
		srv.FailNext(-1, 0)
		err = w.Close()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want a deadline error, got %v", err)
		}
		if srv.Stats().Faults < 2 {
			t.Fatalf("retried only %d times", srv.Stats().Faults)
		}
		// Checked on the server's state while it still fails everything: a
		// PUT sent just before the deadline may reach the handler after a
		// Heal and be stored, which is what Abort is for.
		if _, ok := srv.Object(bucket, "fast/a"); ok {
			t.Fatal("failed write left an object")
		}
		srv.Heal()
		if err := w.Abort(); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("context deadline bounds the retries", func(t *testing.T) {
		srv := newServer(t)
		f := fastFS(t, srv, oss.RetryPolicy{MaxAttempts: 1 << 30})
		srv.FailNext(-1, 0)
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if _, err := f.Stat(cctx, "a"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("want deadline, got %v", err)
		}
	})
	t.Run("client errors are not retried", func(t *testing.T) {
		srv := newServer(t)
		f := fastFS(t, srv, oss.RetryPolicy{MaxAttempts: 5})
		before := srv.Stats().Requests
		if _, err := f.Stat(ctx, "missing"); !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
		if n := srv.Stats().Requests - before; n != 1 {
			t.Fatalf("404 retried: %d requests", n)
		}
	})
	t.Run("lost answer to a successful put", func(t *testing.T) {
		// The first PUT fails with 503 after nothing was stored; OSS can
		// also store and then fail, which the CRC comparison covers: here
		// the object is planted as if an earlier attempt had stored it.
		srv := newServer(t)
		f := fastFS(t, srv, oss.RetryPolicy{MaxAttempts: 5})
		w, _ := f.Create(ctx, "lost")
		w.Write([]byte("same bytes"))
		srv.PutRaw(bucket, "fast/lost", []byte("same bytes"))
		srv.FailNext(1, 0)
		if err := w.Close(); err != nil {
			t.Fatalf("retried put of identical bytes: %v", err)
		}
		w2, _ := f.Create(ctx, "lost2")
		w2.Write([]byte("mine"))
		srv.PutRaw(bucket, "fast/lost2", []byte("theirs"))
		srv.FailNext(1, 0)
		if err := w2.Close(); !errors.Is(err, fs.ErrExist) {
			t.Fatalf("want ErrExist for someone else's object, got %v", err)
		}
		w2.Abort()
		if got, _ := srv.Object(bucket, "fast/lost2"); string(got) != "theirs" {
			t.Fatalf("abort removed someone else's object: %q", got)
		}
	})
}

func TestCanceledContextNotRetried(t *testing.T) {
	srv := newServer(t)
	f := fastFS(t, srv, oss.RetryPolicy{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Create(ctx, "a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if n := srv.Stats().Requests; n != 0 {
		t.Fatalf("%d requests made with a canceled context", n)
	}
}

// TestSecretsNeverAppear collects every log line and error of a run with
// failures and checks that no secret value shows up.
func TestSecretsNeverAppear(t *testing.T) {
	var logs bytes.Buffer
	var mu sync.Mutex
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug})))
	t.Cleanup(func() { slog.SetDefault(prev) })

	srv := newServer(t)
	ctx := context.Background()
	var errs []string
	note := func(err error) {
		if err != nil {
			errs = append(errs, err.Error(), fmt.Sprintf("%+v %#v", err, err))
		}
	}
	p := props(srv, "fs.oss.attempts.maximum", "3", "fs.oss.securityToken", testToken, "fs.oss.accessKeyId", stsID)
	f, err := fsbackend.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	note(fsbackend.WriteFile(ctx, f, "a", []byte("x")))
	srv.FailNext(5, 0)
	note(fsbackend.WriteFile(ctx, f, "b", []byte("x")))
	srv.Heal()
	_, err = f.Open(ctx, "missing")
	note(err)
	note(fsbackend.WriteFile(ctx, f, "a", []byte("x")))
	f.Close()
	// The server quotes the access key id in its answers to a wrong secret
	// and an unknown id (as OSS does in OSSAccessKeyId): the errors must
	// not.
	for _, bad := range []fsbackend.Properties{
		props(srv, "fs.oss.accessKeySecret", "wrong-"+testSecret),
		props(srv, "fs.oss.accessKeyId", unknownID),
		props(srv, "fs.oss.credentials.provider", "x.Y"),
		props(srv, "fs.oss.credentials.provider", oss.ProviderEnvironment),
		props(srv, "oss.bucket", "bad"),
	} {
		f, err := fsbackend.Open(ctx, bad)
		if err == nil {
			err = fsbackend.WriteFile(ctx, f, "c", []byte("x"))
			f.Close()
		}
		note(err)
		errs = append(errs, bad.String())
	}
	opts := oss.Options{Credentials: oss.Credentials{AccessKeyID: testID, AccessKeySecret: testSecret, SecurityToken: testToken}}
	errs = append(errs, fmt.Sprintf("%v %+v %#v %s", opts, opts, opts.Credentials, opts.Credentials))
	if len(errs) < 10 {
		t.Fatalf("too few errors collected: %q", errs)
	}
	mu.Lock()
	out := logs.String() + strings.Join(errs, "\n")
	mu.Unlock()
	if !strings.Contains(out, "retrying") || !strings.Contains(out, "SignatureDoesNotMatch") || !strings.Contains(out, "InvalidAccessKeyId") {
		t.Fatalf("the run did not exercise retries and auth failures:\n%s", out)
	}
	for _, s := range []string{testSecret, testToken, testID, stsID, unknownID} {
		if strings.Contains(out, s) {
			t.Fatalf("secret %q appears in output:\n%s", s[:4]+"…", out)
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

// TestBytesPerNewByte: each batch is one new object, so the bytes the
// server stores per byte of new data is 1, however much was written before
// (SeaTunnel's OSS writer re-sent the whole object on every write).
func TestBytesPerNewByte(t *testing.T) {
	srv := newServer(t)
	f := open(t, props(srv))
	ctx := context.Background()
	batch := bytes.Repeat([]byte("r"), 4096)
	var written int64
	for i := range 50 {
		before := srv.Stats().BytesStored
		if err := fsbackend.WriteFile(ctx, f, fmt.Sprintf("log/run/%06d.log", i), batch); err != nil {
			t.Fatal(err)
		}
		written += int64(len(batch))
		if d := srv.Stats().BytesStored - before; d != int64(len(batch)) {
			t.Fatalf("batch %d: %d bytes sent for %d new bytes (after %d bytes already stored)", i, d, len(batch), written-int64(len(batch)))
		}
	}
	st := srv.Stats()
	ratio := float64(st.BytesStored) / float64(written)
	t.Logf("bytes stored per byte of new data: %.3f (%d / %d), %d PUTs", ratio, st.BytesStored, written, st.PutRequests)
	if ratio != 1 || st.PutRequests != 50 {
		t.Fatalf("ratio %.3f over %d PUTs, want 1 over 50", ratio, st.PutRequests)
	}
}

func TestSharedClientCache(t *testing.T) {
	srv := newServer(t)
	ctx := context.Background()
	p := props(srv, "disable.cache", "false")
	f1 := open(t, p)
	f2 := open(t, p)
	if err := fsbackend.WriteFile(ctx, f1, "shared", []byte("1")); err != nil {
		t.Fatal(err)
	}
	f1.Close()
	if b, err := fsbackend.ReadFile(ctx, f2, "shared"); err != nil || string(b) != "1" {
		t.Fatalf("second FS after the first closed: %q %v", b, err)
	}
	oss.PurgeClientCache()
	if _, err := f2.Stat(ctx, "shared"); err != nil {
		t.Fatalf("after purge: %v", err)
	}
}
