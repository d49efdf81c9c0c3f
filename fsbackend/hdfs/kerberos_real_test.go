package hdfs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/hdfs"
	"github.com/stowage/stowage/mapstore"
	"github.com/stowage/stowage/mapstore/filestore"
	"github.com/stowage/stowage/mapstore/mapstoretest"
)

// The kerberized fixture: testdata/kdc/start.sh (a Debian krb5-kdc) and
// testdata/hdfs/start.sh kerberos (a MiniDFSCluster logged in to it).
const (
	envKrbHDFS   = "STOWAGE_TEST_HDFS_KRB"
	envKDCConf   = "STOWAGE_TEST_KDC_KRB5CONF"
	envKDCDir    = "STOWAGE_TEST_KDC_DIR"
	krbRealm     = "STOWAGE.TEST"
	kdcMasterPwd = "stowage-test-master" // testdata/kdc/start.sh's database password
)

// needKerberos skips unless the KDC and the kerberized HDFS run, and
// points KRB5_CONFIG at the KDC's krb5.conf.
func needKerberos(t *testing.T) {
	t.Helper()
	for _, v := range []string{envKrbHDFS, envKDCConf, envKDCDir} {
		if os.Getenv(v) == "" {
			t.Skipf("%s is not set: start the Kerberos fixture with eval \"$(bash testdata/kdc/start.sh)\"; eval \"$(bash testdata/hdfs/start.sh kerberos)\"", v)
		}
	}
	t.Setenv("KRB5_CONFIG", os.Getenv(envKDCConf))
}

// krbProps are the properties of the kerberized fixture for a principal
// whose keytab is testdata/kdc's <name>.keytab.
func krbProps(name string) fsbackend.Properties {
	return fsbackend.Properties{
		"storage.type":           "hdfs",
		"fs.defaultFS":           "hdfs://" + os.Getenv(envKrbHDFS),
		"kerberosPrincipal":      name + "/localhost@" + krbRealm,
		"kerberosKeytabFilePath": filepath.Join(os.Getenv(envKDCDir), name+".keytab"),
		"seatunnel.hadoop.hadoop.security.authentication":  "kerberos",
		"seatunnel.hadoop.dfs.namenode.kerberos.principal": "hdfs/localhost@" + krbRealm,
		"seatunnel.hadoop.dfs.data.transfer.protection":    "authentication",
	}
}

func openKerberos(t *testing.T, p fsbackend.Properties, h slog.Handler) fsbackend.FS {
	t.Helper()
	opts := hdfs.Options{}
	if h != nil {
		opts.Logger = slog.New(h)
	}
	raw, err := hdfs.OpenWithOptions(context.Background(), p, opts)
	if err != nil {
		t.Fatalf("Open as %s: %v", p["kerberosPrincipal"], err)
	}
	t.Cleanup(func() { raw.Close() })
	sub, err := fsbackend.Sub(raw, uniqueDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func TestKerberosRealReadWrite(t *testing.T) {
	needKerberos(t)
	f := openKerberos(t, krbProps("stowage"), nil)
	data := bytes.Repeat([]byte("kerberos "), 40000) // several packets through SASL
	writeFile(t, f, "a/b", data)
	if got := readFile(t, f, "a/b"); !bytes.Equal(got, data) {
		t.Fatalf("read back %d bytes, want %d", len(got), len(data))
	}
}

// TestKerberosRealCheckpointSuite runs the checkpoint scenario suite on
// the kerberized HDFS.
func TestKerberosRealCheckpointSuite(t *testing.T) {
	needKerberos(t)
	checkpointtest.Run(t, func(t *testing.T) fsbackend.FS {
		return openKerberos(t, krbProps("stowage"), nil)
	})
}

// TestKerberosRealMapStoreContract runs the MapStore contract suite, which
// reopens each store on the same directory (a restart), on the kerberized
// HDFS. Its bulk cases run small: TestMapStoreContract runs them at full
// size on the plain HDFS, and here the question is the login and the
// SASL-protected transfers, which every case exercises.
func TestKerberosRealMapStoreContract(t *testing.T) {
	needKerberos(t)
	mapstoretest.RunWith(t, func(t *testing.T, dir string, partitions int) mapstore.MapStore {
		sum := sha256.Sum256([]byte(dir))
		name := strings.NewReplacer("/", "-", " ", "-").Replace(t.Name())
		raw, err := hdfs.Open(context.Background(), krbProps("stowage"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { raw.Close() })
		sub, err := fsbackend.Sub(raw, "stowage-test/"+name+"-"+hex.EncodeToString(sum[:6]))
		if err != nil {
			t.Fatal(err)
		}
		s, err := filestore.Open(context.Background(), filestore.Options{FS: sub, Partitions: partitions})
		if err != nil {
			t.Fatalf("filestore.Open: %v", err)
		}
		return s
	}, mapstoretest.Options{Small: true})
}

// TestKerberosRealFailures: a wrong keytab, a principal the KDC does not
// know and an unreachable KDC each say which, and no error or log record
// carries key bytes or a password.
func TestKerberosRealFailures(t *testing.T) {
	needKerberos(t)
	unreachable := filepath.Join(t.TempDir(), "krb5.conf")
	conf, err := os.ReadFile(os.Getenv(envKDCConf))
	if err != nil {
		t.Fatal(err)
	}
	// Port 1 on 127.0.0.1: nothing listens, the dial is refused at once.
	conf = regexp.MustCompile(`kdc = 127\.0\.0\.1:\d+`).ReplaceAll(conf, []byte("kdc = 127.0.0.1:1"))
	if err := os.WriteFile(unreachable, conf, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, principal, krb5 string
		want                  []string
	}{
		{"wrong keytab", "stale", "", []string{"stale/localhost@STOWAGE.TEST", "stale.keytab", "does not match the KDC's key"}},
		{"wrong keytab, pre-authentication required", "stalepre", "", []string{"stalepre/localhost@STOWAGE.TEST", "does not match the KDC's key"}},
		{"unknown principal", "ghost", "", []string{"ghost/localhost@STOWAGE.TEST", "unknown to the KDC"}},
		{"unreachable KDC", "stowage", unreachable, []string{"cannot reach the KDC", "127.0.0.1:1", "STOWAGE.TEST"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.krb5 != "" {
				t.Setenv("KRB5_CONFIG", c.krb5)
			}
			var logs lockedBuffer
			p := krbProps(c.principal)
			h := slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})
			raw, err := hdfs.OpenWithOptions(context.Background(), p, hdfs.Options{Logger: slog.New(h)})
			if err == nil {
				// Open may defer the login to the first call.
				_, err = raw.Stat(context.Background(), "/")
				raw.Close()
			}
			if err == nil {
				t.Fatal("no error")
			}
			t.Logf("error: %v", err)
			if !errors.Is(err, hdfs.ErrKerberos) {
				t.Errorf("error is not ErrKerberos: %v", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			assertNoSecrets(t, p["kerberosKeytabFilePath"], []string{err.Error(), fmt.Sprintf("%+v", err), logs.String()})
		})
	}
}

// assertNoSecrets fails if any text holds the keytab file or one of its
// keys (raw, hex or base64) or the KDC's password.
func assertNoSecrets(t *testing.T, keytabPath string, texts []string) {
	t.Helper()
	b, err := os.ReadFile(keytabPath)
	if err != nil {
		t.Fatal(err)
	}
	kt := keytab.New()
	if err := kt.Unmarshal(b); err != nil {
		t.Fatal(err)
	}
	secrets := [][]byte{b, []byte(kdcMasterPwd)}
	for _, e := range kt.Entries {
		secrets = append(secrets, e.Key.KeyValue)
	}
	all := strings.Join(texts, "\n")
	for _, s := range secrets {
		for _, form := range []string{string(s), hex.EncodeToString(s), strings.ToUpper(hex.EncodeToString(s)),
			base64.StdEncoding.EncodeToString(s), base64.RawStdEncoding.EncodeToString(s), base64.URLEncoding.EncodeToString(s)} {
			if len(form) >= 8 && strings.Contains(all, form) {
				t.Errorf("a secret of %s appears in the errors or logs", filepath.Base(keytabPath))
			}
		}
	}
}

// lockedBuffer collects log output written from any goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
