package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/stowage/stowage/internal/testutil/ossserver"
)

// A member process writing its map store and checkpoints to an S3 server
// (gofakes3 on 127.0.0.1, reached over real HTTP by the child) is killed
// with SIGKILL under writers; after each restart every acknowledged write
// is there. One new object per group-commit batch, nothing ever appended.
func TestCrashSIGKILLOnS3(t *testing.T) {
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	if err := backend.CreateBucket("crash"); err != nil {
		t.Fatal(err)
	}
	crashOn(t, "s3", map[string]string{
		"storage.type":                    "s3",
		"s3.bucket":                       "s3a://crash/stowage",
		"fs.s3a.endpoint":                 srv.URL,
		"fs.s3a.access.key":               "AKIDCRASHTEST",
		"fs.s3a.secret.key":               "crash-test-secret",
		"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	})
}

// The same on Tencent COS through its S3-compatible protocol.
func TestCrashSIGKILLOnCOS(t *testing.T) {
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	if err := backend.CreateBucket("crash-1250000000"); err != nil {
		t.Fatal(err)
	}
	crashOn(t, "cos", map[string]string{
		"storage.type":               "cos",
		"cos.bucket":                 "cosn://crash-1250000000/stowage",
		"fs.cosn.bucket.region":      "ap-guangzhou",
		"fs.cosn.endpoint":           srv.URL,
		"fs.cosn.userinfo.secretId":  "AKIDCRASHTEST",
		"fs.cosn.userinfo.secretKey": "crash-test-secret",
	})
}

// The same on Aliyun OSS (the in-process OSS-protocol server, which checks
// request signatures and forbid-overwrite).
func TestCrashSIGKILLOnOSS(t *testing.T) {
	srv := ossserver.New(ossserver.Options{
		Credentials: []ossserver.Credential{{AccessKeyID: "AKIDCRASHTEST", AccessKeySecret: "crash-test-secret"}},
		Buckets:     []string{"crash"},
	})
	defer srv.Close()
	crashOn(t, "oss", map[string]string{
		"storage.type":           "oss",
		"oss.bucket":             "oss://crash/stowage",
		"fs.oss.endpoint":        srv.Endpoint(),
		"fs.oss.accessKeyId":     "AKIDCRASHTEST",
		"fs.oss.accessKeySecret": "crash-test-secret",
	})
}

// The same on Google Cloud Storage (fake-gcs-server listening on 127.0.0.1).
func TestCrashSIGKILLOnGCS(t *testing.T) {
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.CreateBucket("crash")
	crashOn(t, "gcs", map[string]string{
		"storage.type":           "gcs",
		"gcs.bucket":             "gs://crash/stowage",
		"fs.gs.storage.root.url": srv.URL(),
		"fs.gs.auth.type":        "UNAUTHENTICATED",
	})
}

func crashOn(t *testing.T, kind string, props map[string]string) {
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	if err := writeConfigDirOn(cfgDir, "crash"+kind, "/imap", "/checkpoint/", netSpec{}, props); err != nil {
		t.Fatal(err)
	}
	wl := newWorkload("engine_crash_"+kind, 8, 40)
	var out bytes.Buffer
	res, err := crashRounds(context.Background(), cfgDir, filepath.Join(dir, "node.log"), wl, 3, &out)
	t.Log("\n" + out.String())
	if err != nil {
		t.Fatal(err)
	}
	if res.acks == 0 || res.checked == 0 {
		t.Fatalf("nothing was written or checked: %+v", res)
	}
	if res.lost != 0 {
		t.Fatalf("%d keys lost or wrong after SIGKILL on %s", res.lost, kind)
	}
}
