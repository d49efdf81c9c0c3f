package fsbackend_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

func TestPropertiesGet(t *testing.T) {
	p := fsbackend.Properties{"a": "  x  ", "empty": "  ", "z": ""}
	for _, tc := range []struct{ key, def, want string }{
		{"a", "d", "x"}, {"empty", "d", "d"}, {"z", "d", "d"}, {"missing", "d", "d"},
	} {
		if got := p.Get(tc.key, tc.def); got != tc.want {
			t.Errorf("Get(%q, %q) = %q, want %q", tc.key, tc.def, got, tc.want)
		}
	}
}

func TestSecretsAreRedacted(t *testing.T) {
	p := fsbackend.Properties{
		"fs.s3a.access.key":                  "AKIAEXAMPLE",
		"fs.s3a.secret.key":                  "s3cr3t-value",
		"fs.oss.accessKeyId":                 "LTAIexample",
		"fs.oss.accessKeySecret":             "oss-secret-value",
		"fs.gs.auth.service.account.keyfile": "/etc/key.json",
		"kerberosKeytabFilePath":             "/etc/krb5.keytab",
		"hdfs_site_path":                     "/etc/hdfs-site.xml",
		"fs.defaultFS":                       "hdfs://127.0.0.1:9000",
		"seatunnel.hadoop.dfs.client.token":  "tok-value",
		"storage.type":                       "s3",
	}
	secrets := []string{"AKIAEXAMPLE", "s3cr3t-value", "LTAIexample", "oss-secret-value", "/etc/key.json", "/etc/krb5.keytab", "tok-value"}
	out := p.String()
	for _, s := range secrets {
		if strings.Contains(out, s) {
			t.Errorf("String() shows the secret %q: %s", s, out)
		}
	}
	for _, plain := range []string{"hdfs://127.0.0.1:9000", "/etc/hdfs-site.xml", "storage.type: s3"} {
		if !strings.Contains(out, plain) {
			t.Errorf("String() lacks %q: %s", plain, out)
		}
	}
	r := p.Redacted()
	if r["fs.s3a.secret.key"] != "******" || p["fs.s3a.secret.key"] != "s3cr3t-value" {
		t.Errorf("Redacted changed the original or did not redact: %q / %q", r["fs.s3a.secret.key"], p["fs.s3a.secret.key"])
	}
	if (fsbackend.Properties{"fs.s3a.secret.key": ""}).Redacted()["fs.s3a.secret.key"] != "" {
		t.Error("an empty secret is shown as set")
	}
}

// Encryption keys (customer-supplied keys for server-side encryption) are
// secrets in every spelling; the keys naming an algorithm are not.
func TestEncryptionKeysAreSecret(t *testing.T) {
	for _, tc := range []struct {
		key    string
		secret bool
	}{
		{"fs.gs.encryption.key", true},
		{"fs.s3a.encryption.key", true},
		{"fs.s3a.server-side-encryption.key", true},
		{"fs.cosn.server-side-encryption.key", true},
		{"fs.oss.server-side-encryption-key", true},
		{"seatunnel.hadoop.fs.s3a.encryption.key", true},
		{"fs.s3a.sse_encryption_key", true},
		{"encryptionKey", true},
		{"fs.s3a.access-key", true},
		{"fs.gs.encryption.algorithm", false},
		{"fs.s3a.server-side-encryption-algorithm", false},
		{"fs.s3a.encryption.algorithm", false},
		{"fs.defaultFS", false},
		{"block.size", false},
	} {
		if got := fsbackend.IsSecretKey(tc.key); got != tc.secret {
			t.Errorf("IsSecretKey(%q) = %v, want %v", tc.key, got, tc.secret)
		}
		p := fsbackend.Properties{tc.key: "k3y-bytes-base64"}
		shown := strings.Contains(p.String(), "k3y-bytes-base64") || p.Redacted()[tc.key] == "k3y-bytes-base64"
		if shown == tc.secret {
			t.Errorf("%s: value shown %v by String/Redacted, want %v", tc.key, shown, !tc.secret)
		}
	}
}

func TestBackendName(t *testing.T) {
	for _, tc := range []struct {
		p       fsbackend.Properties
		want    string
		wantErr string // a key the error must name
	}{
		{fsbackend.Properties{}, "local", ""},
		{fsbackend.Properties{"storage.type": "hdfs", "fs.defaultFS": "file:///"}, "local", ""},
		{fsbackend.Properties{"storage.type": "HDFS", "fs.defaultFS": "hdfs://127.0.0.1:9000"}, "hdfs", ""},
		{fsbackend.Properties{"fs.defaultFS": "viewfs://cluster"}, "hdfs", ""},
		{fsbackend.Properties{"storage.type": "local"}, "local", ""},
		{fsbackend.Properties{"storage.type": "oss"}, "oss", ""},
		{fsbackend.Properties{"storage.type": "s3"}, "s3", ""},
		{fsbackend.Properties{"storage.type": "cos"}, "cos", ""},
		{fsbackend.Properties{"storage.type": "gcs"}, "gcs", ""},
		{fsbackend.Properties{"storage.type": "ftp"}, "", "storage.type"},
		{fsbackend.Properties{"fs.defaultFS": "s3a://bucket"}, "", "fs.defaultFS"},
		{fsbackend.Properties{"fs.defaultFS": "::not a uri"}, "", "fs.defaultFS"},
	} {
		got, err := fsbackend.BackendName(tc.p)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("BackendName(%v) = %q, %v; want an error naming %s", tc.p, got, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("BackendName(%v) = %q, %v; want %q", tc.p, got, err, tc.want)
		}
	}
}

func TestRegistry(t *testing.T) {
	const name = "fsbackend-test-registry"
	fsbackend.Register(name, func(ctx context.Context, p fsbackend.Properties) (fsbackend.FS, error) { return nil, nil })
	found := false
	for _, n := range fsbackend.Registered() {
		found = found || n == name
	}
	if !found {
		t.Fatalf("Registered() = %q lacks %q", fsbackend.Registered(), name)
	}
	defer func() {
		if recover() == nil {
			t.Error("a second Register of one name did not panic")
		}
	}()
	fsbackend.Register(name, nil)
}

func TestOpenUnregistered(t *testing.T) {
	// This package's tests import no back end that registers "gcs".
	_, err := fsbackend.Open(context.Background(), fsbackend.Properties{"storage.type": "gcs", "fs.gs.auth.service.account.keyfile": "/secret/key.json"})
	if err == nil || !strings.Contains(err.Error(), `"gcs"`) {
		t.Fatalf("Open of an unregistered back end: %v, want an error naming it", err)
	}
	if !strings.Contains(err.Error(), "import github.com/stowage/stowage/fsbackend/gcs") || !strings.Contains(err.Error(), "fsbackend/all") {
		t.Fatalf("the error does not say which package to import: %v", err)
	}
	if strings.Contains(err.Error(), "/secret/key.json") {
		t.Fatalf("the error shows a secret: %v", err)
	}
}
