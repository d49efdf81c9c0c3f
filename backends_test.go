package stowage_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stowage/stowage"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
)

// The root package registers the local back end itself: no test of this
// package imports fsbackend/local (or fsbackend/all), so a library user who
// imports only stowage and config can open a node on the local disk.
func TestLocalBackendIsBuiltIn(t *testing.T) {
	if !slices.Contains(fsbackend.Registered(), "local") {
		t.Fatalf("registered back ends %v lack local", fsbackend.Registered())
	}
	ctx := context.Background()
	n := open(t, stowage.Options{Config: persisted(t, t.TempDir(), "")})
	defer n.Close()
	if err := strMap(t, n, "engine_local").Put(ctx, "k", "v"); err != nil {
		t.Fatalf("Put to a map persisted on the local disk: %v", err)
	}
}

// A back end the program did not import fails Open with an error that
// names the package to import.
func TestMissingBackendNamesItsPackage(t *testing.T) {
	y := `hazelcast:
  cluster-name: test
  map:
    engine*:
      map-store:
        enabled: true
        initial-mode: EAGER
        properties:
          type: hdfs
          namespace: /stowage
          clusterName: test
          storage.type: s3
          s3.bucket: s3a://bucket
          fs.s3a.endpoint: http://127.0.0.1:1
          fs.s3a.aws.credentials.provider: org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider
          fs.s3a.access.key: AKIAEXAMPLE
          fs.s3a.secret.key: s3cr3t-value
`
	cfg, err := config.Parse(nil, []byte(y))
	if err != nil {
		t.Fatal(err)
	}
	n, err := stowage.Open(context.Background(), stowage.Options{Config: cfg})
	if err == nil {
		n.Close()
		t.Fatal("Open with storage.type s3 not built in succeeded")
	}
	if !strings.Contains(err.Error(), "import github.com/stowage/stowage/fsbackend/s3") {
		t.Fatalf("Open with s3 not built in: %v; want the package to import named", err)
	}
	for _, secret := range []string{"AKIAEXAMPLE", "s3cr3t-value"} {
		if strings.Contains(err.Error(), secret) {
			t.Fatalf("the error shows a secret: %v", err)
		}
	}
}
