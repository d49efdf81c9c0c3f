package fsbackend_test

import (
	"strings"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// TestSecretKeySpellings: every secret word is recognised in any case and
// with any separator, and ordinary keys are not.
func TestSecretKeySpellings(t *testing.T) {
	secret := []string{
		"db.pass", "DB_PASS", "basic-auth-password", "key-store-password", "Password",
		"pwd", "db.PWD", "ldap_pwd",
		"apikey", "api.key", "API-KEY", "x_api_key", "apiKey",
		"account.key", "fs.azure.account.key.acct.blob.core.windows.net", "ACCOUNT_KEY", "accountKey",
		"token", "hazelcast.security.token", "Session-Token", "SESSION_TOKEN",
		"credential", "credentials.file", "GOOGLE_CREDENTIALS", "fs.gs.auth.credential",
		"secret", "client.secret", "CLIENT-SECRET", "clientSecret",
	}
	for _, k := range secret {
		if !fsbackend.IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = false", k)
		}
	}
	for _, k := range []string{"fs.defaultFS", "namespace", "clusterName", "s3.bucket", "fs.s3a.path.style.access", "block.size", "type"} {
		if fsbackend.IsSecretKey(k) {
			t.Errorf("IsSecretKey(%q) = true", k)
		}
	}
}

// TestRedactURIs: the user information of every URI in a text is
// replaced, the rest of the text is kept.
func TestRedactURIs(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"s3a://AKID:s3cr3t@bucket/p", "s3a://******@bucket/p"},
		{"open hdfs://alice@nn:8020/x: refused", "open hdfs://******@nn:8020/x: refused"},
		{`proxy "https://u:p%40ss@proxy:3128" and ftp://v:w@h`, `proxy "https://******@proxy:3128" and ftp://******@h`},
		{"mail bob@example.com at https://host/a@b", "mail bob@example.com at https://host/a@b"},
		{"file:///tmp/x", "file:///tmp/x"},
	} {
		if got := fsbackend.RedactURIs(tc.in); got != tc.want {
			t.Errorf("RedactURIs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	p := fsbackend.Properties{"fs.oss.endpoint": "https://id:S3CR3T@oss.example"}
	if s := p.String(); strings.Contains(s, "S3CR3T") || strings.Contains(s, "id:") {
		t.Fatalf("Properties.String shows a URI's user information: %s", s)
	}
	if _, err := fsbackend.BackendName(fsbackend.Properties{"fs.defaultFS": "hdfs://u:S3CR3T@h:1:2:x"}); err == nil || strings.Contains(err.Error(), "S3CR3T") {
		t.Fatalf("BackendName error shows a URI's password: %v", err)
	}
}
