package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"path/filepath"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
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
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	props := map[string]string{
		"storage.type":                    "s3",
		"s3.bucket":                       "s3a://crash/stowage",
		"fs.s3a.endpoint":                 srv.URL,
		"fs.s3a.access.key":               "AKIDCRASHTEST",
		"fs.s3a.secret.key":               "crash-test-secret",
		"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	}
	if err := writeConfigDirOn(cfgDir, "crashs3", "/imap", "/checkpoint/", freePort(t), props); err != nil {
		t.Fatal(err)
	}
	wl := newWorkload("engine_crash_s3", 8, 40)
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
		t.Fatalf("%d keys lost or wrong after SIGKILL on S3", res.lost)
	}
}
