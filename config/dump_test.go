package config_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stowage/stowage/config"
)

// split cuts Dump's output into its two documents.
func split(t testing.TB, dump string) (st, hz []byte) {
	t.Helper()
	a, b, ok := strings.Cut(dump, "\n---\n")
	if !ok {
		t.Fatalf("dump has no document separator:\n%s", dump)
	}
	return []byte(a), []byte(b)
}

const secretST = `seatunnel:
  engine:
    checkpoint:
      storage:
        type: hdfs
        plugin-config:
          namespace: /ck/
          storage.type: oss
          oss.bucket: oss://b
          fs.oss.accessKeyId: AKID-VISIBLE-ID-1
          fs.oss.accessKeySecret: S3CR3T-VALUE-1
          fs.oss.endpoint: https://uploader:S3CR3T-IN-URI@oss.example
`

const secretHZ = `hazelcast:
  properties:
    hazelcast.security.token: S3CR3T-VALUE-3
  map:
    engine*:
      map-store:
        initial-mode: EAGER
        properties:
          type: hdfs
          namespace: /imap
          clusterName: c
          storage.type: s3
          s3.bucket: s3a://b
          fs.s3a.access.key: S3CR3T-VALUE-4
          fs.s3a.secret.key: S3CR3T-VALUE-2
`

func TestSecretsNeverShown(t *testing.T) {
	c, err := config.Parse([]byte(secretST), []byte(secretHZ))
	if err != nil {
		t.Fatal(err)
	}
	s := c.String()
	if strings.Contains(s, "S3CR3T") {
		t.Fatalf("String shows a secret:\n%s", s)
	}
	if strings.Count(s, config.Redacted) < 5 {
		t.Fatalf("String redacts too little:\n%s", s)
	}
	if !strings.Contains(s, "oss://b") || !strings.Contains(s, "https://******@oss.example") {
		t.Fatalf("String hides more than secrets:\n%s", s)
	}
	if strings.Contains(s, "uploader") {
		t.Fatalf("String shows the user information of a URI (often an access key id):\n%s", s)
	}

	// Break rules next to every secret: no error may quote one.
	broken := []struct{ st, hz string }{
		{strings.Replace(secretST, "namespace: /ck/", "namespace: ck", 1), ""},
		{strings.Replace(secretST, "storage.type: oss", "storage.type: S3CR3T-VALUE-1", 1), ""},
		{strings.Replace(secretST, "type: hdfs", "type: S3CR3T/x", 1), ""},
		{"", strings.Replace(secretHZ, "clusterName: c", "clusterName: ../c", 1)},
		{"", strings.Replace(secretHZ, "storage.type: s3", "storage.type: hdfs\n          fs.defaultFS: \"ftp://u:S3CR3T-VALUE-2@h\"", 1)},
		{"", strings.Replace(secretHZ, "fs.s3a.secret.key: S3CR3T-VALUE-2", "fs.s3a.secret.key: [S3CR3T, {x: 1}]", 1)},
		{"", strings.Replace(secretHZ, "fs.s3a.secret.key: S3CR3T-VALUE-2", "fs.s3a.secret.key: S3CR3T-VALUE-2\n          fs.s3a.secret.key: S3CR3T-VALUE-5", 1)},
	}
	for i, b := range broken {
		_, err := config.Parse([]byte(b.st), []byte(b.hz))
		if err == nil {
			t.Fatalf("case %d accepted", i)
		}
		if strings.Contains(err.Error(), "S3CR3T") {
			t.Fatalf("case %d: error shows a secret: %v", i, err)
		}
	}
}

// Dump parses back to the same configuration.
func TestDumpRoundTrip(t *testing.T) {
	st := readFixture(t, "hybrid-04-checkpoint.yaml")
	hz := nest(readFixture(t, "hybrid-08-imap-hdfs-fragment.yaml"), "hazelcast")
	hz = append(hz, "  network:\n    join:\n      tcp-ip:\n        enabled: true\n        member-list: [a, \"b:5802\"]\n  properties:\n    hazelcast.logging.type: 'true'\n"...)
	for _, in := range []struct{ st, hz []byte }{{nil, nil}, {st, hz}, {[]byte(secretST), nil}} {
		c, err := config.Parse(in.st, in.hz)
		if err != nil {
			t.Fatal(err)
		}
		d1, d2 := split(t, c.String())
		back, err := config.Parse(d1, d2)
		if err != nil {
			t.Fatalf("dump does not parse: %v\n%s", err, c)
		}
		if in.st != nil && strings.Contains(string(in.st), "S3CR3T") {
			continue // redacted values differ by design
		}
		if !reflect.DeepEqual(back.Engine, c.Engine) || !reflect.DeepEqual(back.Hazelcast, c.Hazelcast) {
			t.Fatalf("round trip differs:\n%+v\n%+v\n%s", c, back, c)
		}
	}
}

func TestBlockSizeAccessor(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int64
		ok   bool
	}{{"", 0, true}, {"4194304", 4194304, true}, {"0", 0, false}, {"-1", 0, false}, {"4M", 0, false}} {
		ms := config.MapStoreConfig{Properties: map[string]string{"block.size": tc.v}}
		n, err := ms.BlockSize()
		if n != tc.want || (err == nil) != tc.ok {
			t.Errorf("BlockSize(%q) = %d, %v", tc.v, n, err)
		}
		if err != nil && (!errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "block.size")) {
			t.Errorf("BlockSize(%q) error %v", tc.v, err)
		}
	}
	ms := config.MapStoreConfig{Properties: map[string]string{}}
	want(t, "default store type", ms.StoreType(), "hdfs")
	ms.Properties["type"] = "BBolt"
	want(t, "store type", ms.StoreType(), "bbolt")
}

func TestCommitDelayAccessor(t *testing.T) {
	for _, tc := range []struct {
		v       string
		want    time.Duration
		set, ok bool
	}{
		{"", 0, false, true},
		{"0", -1, true, true},
		{"0s", -1, true, true},
		{"250us", 250 * time.Microsecond, true, true},
		{"2ms", 2 * time.Millisecond, true, true},
		{"100ms", 100 * time.Millisecond, true, true},
		{"101ms", 0, false, false},
		{"-1ms", 0, false, false},
		{"2", 0, false, false},
	} {
		ms := config.MapStoreConfig{Properties: map[string]string{config.KeyCommitDelay: tc.v}}
		d, err := ms.CommitDelay()
		if d != tc.want || (err == nil) != tc.ok {
			t.Errorf("CommitDelay(%q) = %v, %v", tc.v, d, err)
		}
		if err != nil && (!errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), config.KeyCommitDelay)) {
			t.Errorf("CommitDelay(%q) error %v", tc.v, err)
		}
	}
}

func TestOpenFilesAccessor(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
		ok   bool
	}{
		{"", 0, true},
		{"1", 1, true},
		{"2", 2, true},
		{"8", 8, true},
		{"0", 0, false},
		{"9", 0, false},
		{"-1", 0, false},
		{"two", 0, false},
	} {
		ms := config.MapStoreConfig{Properties: map[string]string{config.KeyOpenFiles: tc.v}}
		n, err := ms.OpenFiles()
		if n != tc.want || (err == nil) != tc.ok {
			t.Errorf("OpenFiles(%q) = %d, %v", tc.v, n, err)
		}
		if err != nil && (!errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), config.KeyOpenFiles)) {
			t.Errorf("OpenFiles(%q) error %v", tc.v, err)
		}
	}
}
