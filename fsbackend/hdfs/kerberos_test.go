package hdfs_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/hdfs"
)

func errorsIs(err, target error) bool { return errors.Is(err, target) }

const keytabPassword = "not-a-real-password-3f9a"

// writeKeytab writes a keytab holding a key for principal (name@realm).
func writeKeytab(t *testing.T, name, realm string) string {
	t.Helper()
	kt := keytab.New()
	if err := kt.AddEntry(name, realm, keytabPassword, time.Unix(1700000000, 0), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "stowage.keytab")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func kerberosProps(keytabPath string) fsbackend.Properties {
	return fsbackend.Properties{
		"fs.defaultFS":           "hdfs://127.0.0.1:1",
		"kerberosPrincipal":      "stowage/host1@EXAMPLE.COM",
		"kerberosKeytabFilePath": keytabPath,
		"seatunnel.hadoop.dfs.namenode.kerberos.principal": "nn/_HOST@EXAMPLE.COM",
		"seatunnel.hadoop.hadoop.security.authentication":  "kerberos",
		"krb5Path": "/nonexistent/krb5.conf",
	}
}

func TestKerberosConfig(t *testing.T) {
	isolate(t)
	c, err := hdfs.ParseProperties(kerberosProps("/k"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Kerberos == nil || c.Kerberos.Principal != "stowage/host1@EXAMPLE.COM" || c.Kerberos.ServicePrincipal != "nn/_HOST" {
		t.Errorf("Kerberos = %+v", c.Kerberos)
	}
	if got := c.ClientOptions().KerberosServicePrincipleName; got != "nn/_HOST" {
		t.Errorf("ClientOptions SPN = %q, want nn/_HOST", got)
	}
}

func TestKerberosKeytabErrors(t *testing.T) {
	isolate(t)
	garbage := filepath.Join(t.TempDir(), "garbage.keytab")
	if err := os.WriteFile(garbage, []byte("\x05\x02not a keytab at all"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		keytab string
		want   []string
	}{
		{"missing file", filepath.Join(t.TempDir(), "none.keytab"), []string{"cannot read keytab file", "none.keytab", "kerberosKeytabFilePath"}},
		{"not a keytab", garbage, []string{"cannot read keytab file", "garbage.keytab"}},
		{"principal not in keytab", writeKeytab(t, "someone-else", "EXAMPLE.COM"), []string{"holds no key for principal stowage/host1@EXAMPLE.COM", "kerberosPrincipal"}},
		{"realm not in keytab", writeKeytab(t, "stowage/host1", "OTHER.ORG"), []string{"holds no key for principal stowage/host1@EXAMPLE.COM"}},
		{"right keytab, unreadable krb5.conf", writeKeytab(t, "stowage/host1", "EXAMPLE.COM"), []string{"krb5.conf", "/nonexistent/krb5.conf"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := hdfs.Open(t.Context(), kerberosProps(tc.keytab))
			if err == nil {
				f.Close()
				t.Fatal("Open succeeded")
			}
			if !errors.Is(err, hdfs.ErrKerberos) {
				t.Errorf("error %q is not ErrKerberos", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), keytabPassword) {
				t.Errorf("error %q leaks key material", err)
			}
		})
	}
}
