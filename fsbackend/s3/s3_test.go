package s3_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/internal/objstore/s3test"
	"github.com/stowage/stowage/fsbackend/s3"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/mapstore/mapstoretest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	testKeyID  = "AKIDSTOWAGETEST01"
	testSecret = "s3cr3t-value-never-printed"
)

var bucketSeq atomic.Int64

// newServer starts gofakes3 checking that every request is signed with
// the test keys.
func newServer(t *testing.T) *s3test.Server {
	return s3test.NewServer(t, s3test.Credential{AccessKeyID: testKeyID, SecretAccessKey: testSecret})
}

// props describes a fresh bucket on srv with static keys.
func props(t *testing.T, srv *s3test.Server, kv ...string) fsbackend.Properties {
	t.Helper()
	b := fmt.Sprintf("b%d", bucketSeq.Add(1))
	srv.CreateBucket(t, b)
	p := fsbackend.Properties{
		"storage.type":                    "s3",
		"s3.bucket":                       "s3a://" + b + "/root",
		"fs.s3a.endpoint":                 srv.URL,
		"fs.s3a.access.key":               testKeyID,
		"fs.s3a.secret.key":               testSecret,
		"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	}
	for i := 0; i+1 < len(kv); i += 2 {
		p[kv[i]] = kv[i+1]
	}
	return p
}

func open(t *testing.T, p fsbackend.Properties) fsbackend.FS {
	t.Helper()
	f, err := fsbackend.Open(context.Background(), p)
	if err != nil {
		t.Fatalf("fsbackend.Open(%s): %v", p, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestConformanceGofakes3(t *testing.T) {
	srv := newServer(t)
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS {
		return open(t, props(t, srv))
	}, fsbackendtest.Options{LargeFile: 1 << 20})
}

func motoProps(t *testing.T) fsbackend.Properties {
	ep := s3test.ExternalEndpoint(t)
	b := s3test.CreateExternalBucket(t, ep, "stowage-s3")
	return fsbackend.Properties{
		"storage.type":      "s3",
		"s3.bucket":         "s3a://" + b + "/root",
		"fs.s3a.endpoint":   ep,
		"fs.s3a.access.key": "testing",
		"fs.s3a.secret.key": "testing",
	}
}

func TestConformanceMoto(t *testing.T) {
	s3test.ExternalEndpoint(t)
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS {
		return open(t, motoProps(t))
	}, fsbackendtest.Options{LargeFile: 1 << 20})
}

func TestCheckpointSuiteGofakes3(t *testing.T) {
	srv := newServer(t)
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS {
		return open(t, props(t, srv))
	})
}

func TestCheckpointSuiteMoto(t *testing.T) {
	s3test.ExternalEndpoint(t)
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS {
		return open(t, motoProps(t))
	})
}

// TestMapStoreContractGofakes3 runs the MapStore contract on the file map
// store over S3. Every call is an HTTP round trip through the SDK, so under
// the race detector (or with -short) the bulk cases run at their small
// size; without it the full size takes a few seconds.
func TestMapStoreContractGofakes3(t *testing.T) {
	srv := newServer(t)
	b := "maps"
	srv.CreateBucket(t, b)
	mapstoretest.RunWith(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
		sum := sha256.Sum256([]byte(dir))
		f := open(t, fsbackend.Properties{
			"storage.type":      "s3",
			"s3.bucket":         "s3a://" + b + "/" + hex.EncodeToString(sum[:8]),
			"fs.s3a.endpoint":   srv.URL,
			"fs.s3a.access.key": testKeyID,
			"fs.s3a.secret.key": testSecret,
		})
		s, err := filestore.Open(context.Background(), filestore.Options{FS: f, Partitions: partitions})
		if err != nil {
			t.Fatalf("filestore.Open: %v", err)
		}
		return s
	}, mapstoretest.Options{Small: raceEnabled || testing.Short()})
}

// TestConditionalCreateRace: of many writers closing the same new name at
// once, exactly one wins and the rest get fs.ErrExist, on both servers.
func TestConditionalCreateRace(t *testing.T) {
	for _, server := range []string{"gofakes3", "moto"} {
		t.Run(server, func(t *testing.T) {
			var p fsbackend.Properties
			if server == "moto" {
				p = motoProps(t)
			} else {
				p = props(t, newServer(t))
			}
			f := open(t, p)
			ctx := context.Background()
			const n = 8
			var writers []fsbackend.Writer
			for i := 0; i < n; i++ {
				w, err := f.Create(ctx, "race/x")
				if err != nil {
					t.Fatalf("Create %d: %v", i, err)
				}
				fmt.Fprintf(w, "writer %d", i)
				writers = append(writers, w)
			}
			errs := make([]error, n)
			var wg sync.WaitGroup
			for i, w := range writers {
				wg.Add(1)
				go func() { defer wg.Done(); errs[i] = w.Close() }()
			}
			wg.Wait()
			won := -1
			for i, err := range errs {
				switch {
				case err == nil && won >= 0:
					t.Fatalf("writers %d and %d both created race/x", won, i)
				case err == nil:
					won = i
				case !errors.Is(err, fs.ErrExist):
					t.Fatalf("writer %d: %v, want fs.ErrExist", i, err)
				default:
					if err := writers[i].Abort(); err != nil {
						t.Fatalf("Abort of a losing writer: %v", err)
					}
				}
			}
			if won < 0 {
				t.Fatal("no writer created race/x")
			}
			got, err := fsbackend.ReadFile(ctx, f, "race/x")
			if err != nil || string(got) != fmt.Sprintf("writer %d", won) {
				t.Fatalf("race/x = %q, %v; want the winner's bytes", got, err)
			}
		})
	}
}

func TestCapabilitiesAndSync(t *testing.T) {
	f := open(t, props(t, newServer(t)))
	c := f.Capabilities()
	if c.DurableAppend || c.AtomicRename || !c.ConditionalCreate {
		t.Fatalf("capabilities %+v", c)
	}
	w, err := f.Create(context.Background(), "a")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("x"))
	if err := w.Sync(); !errors.Is(err, fsbackend.ErrUnsupported) {
		t.Fatalf("Sync = %v, want ErrUnsupported", err)
	}
	if _, err := f.Stat(context.Background(), "a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("object visible before Close: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(context.Background(), "a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("aborted object exists: %v", err)
	}
}

// TestKeysUnderPrefix: a name lives at <bucket prefix>/<name>, and two
// prefixes of one bucket do not see each other.
func TestKeysUnderPrefix(t *testing.T) {
	srv := newServer(t)
	srv.CreateBucket(t, "shared")
	mk := func(prefix string) fsbackend.FS {
		return open(t, fsbackend.Properties{"storage.type": "s3", "s3.bucket": "s3://shared" + prefix, "fs.s3a.endpoint": srv.URL,
			"fs.s3a.access.key": testKeyID, "fs.s3a.secret.key": testSecret})
	}
	root, a, b := mk(""), mk("/a"), mk("/b/c")
	ctx := context.Background()
	if err := fsbackend.WriteFile(ctx, a, "x/1", []byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := fsbackend.WriteFile(ctx, b, "x/1", []byte("b")); err != nil {
		t.Fatal(err)
	}
	l, err := root.List(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, fi := range l {
		names = append(names, fi.Name)
	}
	if strings.Join(names, ",") != "a/x/1,b/c/x/1" {
		t.Fatalf("root lists %v", names)
	}
	if l, _ := a.List(ctx, ""); len(l) != 1 || l[0].Name != "x/1" {
		t.Fatalf("prefix a lists %+v", l)
	}
}

func TestBucketURL(t *testing.T) {
	cases := []struct {
		bucket  string
		wantErr string
	}{
		{"s3a://bkt", ""},
		{"s3://bkt/some/prefix", ""},
		{"s3n://bkt/p/", ""},
		{"", "s3.bucket"},
		{"gs://bkt", "s3.bucket"},
		{"bkt", "s3.bucket"},
		{"s3a://bkt/../x", "s3.bucket"},
	}
	for _, c := range cases {
		t.Run(c.bucket, func(t *testing.T) {
			_, err := s3.ParseProperties(context.Background(), fsbackend.Properties{"s3.bucket": c.bucket, "fs.s3a.access.key": "k", "fs.s3a.secret.key": "s"})
			if c.wantErr == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("err = %v, want one naming %s", err, c.wantErr)
			}
		})
	}
}

func TestBadPropertyValues(t *testing.T) {
	cases := map[string]string{
		"fs.s3a.path.style.access": "sometimes",
		"fs.s3a.retry.limit":       "-1",
		"fs.s3a.retry.interval":    "soon",
		"disable.cache":            "maybe",
		"fs.s3a.endpoint":          "ftp://x",
	}
	for key, val := range cases {
		t.Run(key, func(t *testing.T) {
			p := fsbackend.Properties{"s3.bucket": "s3a://b", "fs.s3a.access.key": "k", "fs.s3a.secret.key": "s", key: val}
			_, err := s3.ParseProperties(context.Background(), p)
			if err == nil || !strings.Contains(err.Error(), key) {
				t.Fatalf("err = %v, want one naming %s", err, key)
			}
		})
	}
}

// TestBytesWritten: K objects of n bytes count K*n bytes, whatever else is
// in the bucket (unlike a store that rewrites a whole object per write).
func TestBytesWritten(t *testing.T) {
	srv := newServer(t)
	p := props(t, srv)
	ctx := context.Background()
	pre := open(t, p)
	for i := 0; i < 5; i++ {
		if err := fsbackend.WriteFile(ctx, pre, fmt.Sprintf("old/%d", i), bytes.Repeat([]byte("o"), 100_000)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := s3.Open(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const k, n = 20, 4096
	for i := 0; i < k; i++ {
		if err := fsbackend.WriteFile(ctx, f, fmt.Sprintf("log/%03d", i), bytes.Repeat([]byte{byte(i)}, n)); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.BytesWritten(); got != k*n {
		t.Fatalf("BytesWritten = %d, want %d", got, k*n)
	}
	if got := f.ObjectsWritten(); got != k {
		t.Fatalf("ObjectsWritten = %d, want %d", got, k)
	}
	// A refused create writes nothing.
	if err := fsbackend.WriteFile(ctx, f, "log/000", []byte("again")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("rewrite: %v", err)
	}
	if got := f.BytesWritten(); got != k*n {
		t.Fatalf("BytesWritten after a refused create = %d, want %d", got, k*n)
	}
}

func TestRetryThrottling(t *testing.T) {
	srv := newServer(t)
	p := props(t, srv, "fs.s3a.retry.interval", "1ms", "disable.cache", "true")
	f, err := s3.Open(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	srv.FailFirst.Store(4)
	if err := fsbackend.WriteFile(context.Background(), f, "t/1", []byte("data")); err != nil {
		t.Fatalf("write through throttling: %v", err)
	}
	if srv.Failed() != 4 || f.Retries() != 4 {
		t.Fatalf("failed %d, retries %d, want 4 and 4", srv.Failed(), f.Retries())
	}
	got, err := fsbackend.ReadFile(context.Background(), f, "t/1")
	if err != nil || string(got) != "data" {
		t.Fatalf("read %q, %v", got, err)
	}
}

func TestRetryGivesUp(t *testing.T) {
	srv := newServer(t)
	p := props(t, srv, "fs.s3a.retry.interval", "1ms", "fs.s3a.retry.limit", "1000000", "disable.cache", "true")
	f := open(t, p)
	// Long enough that the first attempt reaches the server on a busy
	// machine: the error must carry the server's answer.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	w, err := f.Create(ctx, "t/1")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("data"))
	srv.FailAlways.Store(true)
	err = w.Close()
	if err == nil {
		t.Fatal("write to a failing server succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "InternalError") {
		t.Fatalf("err = %v, want the server's error and the deadline", err)
	}
	if f.(*s3.FS).Retries() == 0 {
		t.Fatal("no retries before giving up")
	}
	srv.FailAlways.Store(false)
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if _, err := f.Stat(context.Background(), "t/1"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("failed write left an object: %v", err)
	}
}

// TestLostAnswer: a PUT that took effect but whose answer was lost is
// retried; the retry meets 412, finds its own bytes there and succeeds.
// A different writer's object under the name still gives fs.ErrExist.
func TestLostAnswer(t *testing.T) {
	srv := newServer(t)
	f := open(t, props(t, srv, "fs.s3a.retry.interval", "1ms", "disable.cache", "true"))
	ctx := context.Background()
	srv.LoseAnswers.Store(1)
	if err := fsbackend.WriteFile(ctx, f, "l/1", []byte("mine")); err != nil {
		t.Fatalf("write whose first answer was lost: %v", err)
	}
	if srv.Failed() != 1 {
		t.Fatalf("%d answers lost, want 1", srv.Failed())
	}
	if got, err := fsbackend.ReadFile(ctx, f, "l/1"); err != nil || string(got) != "mine" {
		t.Fatalf("l/1 = %q, %v", got, err)
	}
	if err := fsbackend.WriteFile(ctx, f, "l/1", []byte("other")); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("second writer: %v, want fs.ErrExist", err)
	}
}

// TestAbortAfterLostAnswer: when every answer is lost and the write gives
// up, Abort removes the object the PUT did store; it never removes an
// object with other bytes.
func TestAbortAfterLostAnswer(t *testing.T) {
	srv := newServer(t)
	f := open(t, props(t, srv, "fs.s3a.retry.interval", "1ms", "fs.s3a.retry.limit", "0", "disable.cache", "true"))
	ctx := context.Background()
	srv.LoseAnswers.Store(1)
	w, _ := f.Create(ctx, "l/2")
	w.Write([]byte("mine"))
	if err := w.Close(); err == nil {
		t.Fatal("Close succeeded with its only answer lost and no retries")
	}
	if _, err := f.Stat(ctx, "l/2"); err != nil {
		t.Fatalf("the PUT should have taken effect: %v", err)
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Stat(ctx, "l/2"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Abort left the object: %v", err)
	}
	// Another writer's object is left alone.
	if err := fsbackend.WriteFile(ctx, f, "l/3", []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	w, _ = f.Create(ctx, "l/3")
	w.Write([]byte("mine"))
	if err := w.Close(); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("Close over an existing object: %v", err)
	}
	w.Abort()
	if got, err := fsbackend.ReadFile(ctx, f, "l/3"); err != nil || string(got) != "theirs" {
		t.Fatalf("l/3 = %q, %v after a losing writer's Abort", got, err)
	}
}
