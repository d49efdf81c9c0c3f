package checkpoint_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jcmturner/gokrb5/v8/iana/etypeID"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"github.com/stowage/stowage/checkpoint"
	"github.com/stowage/stowage/checkpoint/checkpointtest"
	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/fsbackend"
	_ "github.com/stowage/stowage/fsbackend/all" // every back end a seed example names
	"github.com/stowage/stowage/fsbackend/hdfs"
)

// The checkpoint storage examples of the seed document
// (shared/reference/000_44052d4208547c9e.txt), kept verbatim in
// testdata/config by package config. Each must build a storage through the
// factory registry exactly as the engine does (config.Parse, then
// checkpoint.New with the block's type, namespace, max-retained and
// plugin-config) with fake credentials and without reaching a server: the
// object-store back ends make no request until the first read or write.
//
// An example whose placeholder a SeaTunnel user must replace, or which
// leaves to the user's Hadoop configuration what it does not spell out,
// fails with an error naming the key to fix.
var checkpointExamples = []struct {
	file string
	// fragment: the document shows only plugin-config's lines.
	fragment bool
	// env holds the fake credentials the example reads from the
	// environment; "$KEYFILE" stands for a generated service account key.
	env map[string]string
	// wantErr lists what the error must name; empty means it must build.
	wantErr []string
	// fix, for an example that fails on a placeholder, puts a fake but
	// well-formed value in its place: the example must then build. Nil
	// where building the completed example needs a server (its own test
	// covers it).
	fix func(t *testing.T, pc fsbackend.Properties)
	// retained is the max-retained the storage must use.
	retained int
}{
	// No storage.type and no fs.defaultFS: the local disk, as in SeaTunnel.
	{file: "checkpoint-01-storage-template.yaml", retained: checkpoint.DefaultMaxRetained},
	// "fs.oss.endpoint: endpoint address" is a placeholder.
	// The OSS back end makes no request until the first read or write, so
	// an endpoint on a loopback port nothing listens on builds.
	{file: "checkpoint-02-oss-static-keys.yaml", wantErr: []string{"fs.oss.endpoint", `"endpoint address"`}, retained: 3,
		fix: func(t *testing.T, pc fsbackend.Properties) { pc["fs.oss.endpoint"] = "http://" + closedPorts(t, 1)[0] }},
	{file: "checkpoint-03-oss-env-credentials.yaml", retained: checkpoint.DefaultMaxRetained,
		env: map[string]string{"OSS_ACCESS_KEY_ID": "LTAIfakeid", "OSS_ACCESS_KEY_SECRET": "fake-oss-secret"}},
	// your-region only becomes an endpoint host name: it builds, and the
	// first request would fail.
	{file: "checkpoint-04-cos-static-keys.yaml", retained: 3},
	{file: "checkpoint-05-cos-env-credentials-fragment.yaml", fragment: true, retained: checkpoint.DefaultMaxRetained,
		env: map[string]string{"COSN_SECRET_ID": "AKIDfakeid", "COSN_SECRET_KEY": "fake-cos-secret"}},
	// /path/to/service-account-key.json is a placeholder.
	// A generated key file in its place builds (no token is asked for
	// before the first request).
	{file: "checkpoint-06-gcs-keyfile.yaml", wantErr: []string{"fs.gs.auth.service.account.json.keyfile", "/path/to/service-account-key.json"}, retained: 3,
		fix: func(t *testing.T, pc fsbackend.Properties) {
			pc["fs.gs.auth.service.account.json.keyfile"] = fakeServiceAccountKey(t)
		}},
	{file: "checkpoint-07-gcs-adc.yaml", retained: 3, env: map[string]string{"GOOGLE_APPLICATION_CREDENTIALS": "$KEYFILE"}},
	{file: "checkpoint-08-s3-static-keys.yaml", retained: 3},
	{file: "checkpoint-09-s3-env-credentials-fragment.yaml", fragment: true, retained: checkpoint.DefaultMaxRetained,
		env: map[string]string{"AWS_ACCESS_KEY_ID": "AKIAFAKEID", "AWS_SECRET_ACCESS_KEY": "fake-aws-secret"}},
	// The instance profile is asked for credentials at the first request.
	{file: "checkpoint-10-s3-instance-profile.yaml", retained: 3},
	// The container provider needs the variable ECS or EKS sets.
	{file: "checkpoint-11-s3-container-credentials.yaml", retained: 3,
		env: map[string]string{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI": "/v2/credentials/fake"}},
	// The example relies on the user's hdfs-site.xml for the NameNode's
	// Kerberos principal (TestCheckpointExampleKerberosKeytab and
	// TestCheckpointExampleKerberosFakeKeytab go on from there).
	{file: "checkpoint-12-hdfs-kerberos.yaml", wantErr: []string{"seatunnel.hadoop.dfs.namenode.kerberos.principal"}},
	// checkpoint-13 (HA) names NameNode hosts: TestCheckpointExampleHDFSHA.
	{file: "checkpoint-14-localfile.yaml", retained: 3},
	// hdfs:/// names no NameNode, and Hadoop refuses it as fs.defaultFS
	// too (no authority); TestCheckpointExampleCacheHDFS puts a NameNode
	// there.
	{file: "checkpoint-15-cache-hdfs.yaml", wantErr: []string{"fs.defaultFS", `"hdfs:///"`}},
	{file: "checkpoint-16-cache-localfile.yaml", retained: 3},
}

// credentialEnv lists every variable the back ends read; the tests clear
// them so that the machine's own settings cannot help or hurt.
var credentialEnv = []string{
	"OSS_ACCESS_KEY_ID", "OSS_ACCESS_KEY_SECRET", "OSS_SESSION_TOKEN",
	"COSN_SECRET_ID", "COSN_SECRET_KEY",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_REGION", "AWS_DEFAULT_REGION",
	"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN",
	"GOOGLE_APPLICATION_CREDENTIALS", "STORAGE_EMULATOR_HOST",
	"HADOOP_CONF_DIR", "HADOOP_HOME", "HADOOP_USER_NAME", "KRB5_CONFIG",
}

// isolateEnv clears credentialEnv for the test and points the AWS shared
// files at nothing.
func isolateEnv(t *testing.T) {
	t.Helper()
	for _, v := range credentialEnv {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	none := filepath.Join(t.TempDir(), "none")
	t.Setenv("AWS_CONFIG_FILE", none)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", none)
}

// readSeatunnelExample returns a seed example as a seatunnel.yaml, a
// plugin-config fragment nested where the document places it.
func readSeatunnelExample(t *testing.T, file string, fragment bool) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", "config", file))
	if err != nil {
		t.Fatal(err)
	}
	if !fragment {
		return b
	}
	var s strings.Builder
	s.WriteString("seatunnel:\n  engine:\n    checkpoint:\n      storage:\n        type: hdfs\n        plugin-config:\n")
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		s.WriteString("          " + strings.TrimSpace(l) + "\n")
	}
	return []byte(s.String())
}

// buildFromConfig builds the storage of c's checkpoint block the way the
// engine does (stowage.OpenCheckpointStorage).
func buildFromConfig(ctx context.Context, c *config.Config) (checkpoint.Storage, error) {
	s := c.Engine.Checkpoint.Storage
	return checkpoint.New(ctx, s.Type, checkpoint.FactoryOptions{
		Namespace: s.Namespace, MaxRetained: s.MaxRetained, Properties: s.PluginConfig,
	})
}

// fakeServiceAccountKey writes a service account key file with a freshly
// generated private key, for Application Default Credentials.
func fakeServiceAccountKey(t *testing.T) string {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "stowage-test", "private_key_id": "0123456789abcdef",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "checkpoints@stowage-test.iam.gserviceaccount.com", "client_id": "1234567890",
		"token_uri": "https://oauth2.googleapis.com/token",
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "service-account.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestCheckpointExamplesBuild(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "config", "checkpoint-*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Every fixture has a row here, but checkpoint-13 which has its own test.
	if len(files) != len(checkpointExamples)+1 {
		t.Fatalf("%d checkpoint fixtures, %d rows (+1 for HA): every fixture needs a row", len(files), len(checkpointExamples))
	}
	for _, ex := range checkpointExamples {
		t.Run(strings.TrimSuffix(ex.file, ".yaml"), func(t *testing.T) {
			isolateEnv(t)
			for k, v := range ex.env {
				if v == "$KEYFILE" {
					v = fakeServiceAccountKey(t)
				}
				t.Setenv(k, v)
			}
			c, err := config.Parse(readSeatunnelExample(t, ex.file, ex.fragment), nil)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			s, err := buildFromConfig(t.Context(), c)
			if len(ex.wantErr) > 0 {
				if err == nil {
					s.Close()
					t.Fatal("built a storage; want an error naming the placeholder's key")
				}
				for _, w := range ex.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %s", err, w)
					}
				}
				if ex.fix == nil {
					return
				}
				ex.fix(t, c.Engine.Checkpoint.Storage.PluginConfig)
				if err := c.Validate(); err != nil {
					t.Fatalf("completed example does not validate: %v", err)
				}
				s, err = buildFromConfig(t.Context(), c)
				if err != nil {
					t.Fatalf("build with the placeholder replaced: %v", err)
				}
			} else if err != nil {
				t.Fatalf("build: %v", err)
			}
			fs, ok := s.(*checkpoint.FileStorage)
			if !ok {
				s.Close()
				t.Fatalf("storage is a %T, want *checkpoint.FileStorage", s)
			}
			if fs.Namespace() != checkpoint.DefaultNamespace || fs.MaxRetained() != ex.retained {
				t.Errorf("namespace %q, max-retained %d; want %q, %d", fs.Namespace(), fs.MaxRetained(), checkpoint.DefaultNamespace, ex.retained)
			}
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
		})
	}
}

// TestCheckpointExamplesMissingEnvironment: the examples that take their
// credentials from the environment name the variables when they are unset.
func TestCheckpointExamplesMissingEnvironment(t *testing.T) {
	for _, tc := range []struct {
		file     string
		fragment bool
		want     []string
	}{
		{"checkpoint-03-oss-env-credentials.yaml", false, []string{"OSS_ACCESS_KEY_ID", "OSS_ACCESS_KEY_SECRET"}},
		{"checkpoint-05-cos-env-credentials-fragment.yaml", true, []string{"COSN_SECRET_ID", "COSN_SECRET_KEY"}},
		{"checkpoint-09-s3-env-credentials-fragment.yaml", true, []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}},
		{"checkpoint-11-s3-container-credentials.yaml", false, []string{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"}},
	} {
		t.Run(strings.TrimSuffix(tc.file, ".yaml"), func(t *testing.T) {
			isolateEnv(t)
			c, err := config.Parse(readSeatunnelExample(t, tc.file, tc.fragment), nil)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			s, err := buildFromConfig(t.Context(), c)
			if err == nil {
				s.Close()
				t.Fatal("built without credentials in the environment")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %s", err, w)
				}
			}
		})
	}
}

// TestCheckpointExampleKerberosKeytab completes the Kerberos example with
// what a user's hdfs-site.xml holds (the NameNode's principal, read from
// HADOOP_CONF_DIR): the storage then fails on the example's placeholder
// keytab, naming kerberosKeytabFilePath, before any NameNode is dialled.
func TestCheckpointExampleKerberosKeytab(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	site := `<?xml version="1.0"?><configuration>
<property><name>dfs.namenode.kerberos.principal</name><value>nn/_HOST@EXAMPLE.COM</value></property>
</configuration>`
	if err := os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HADOOP_CONF_DIR", dir)
	c, err := config.Parse(readSeatunnelExample(t, "checkpoint-12-hdfs-kerberos.yaml", false), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := buildFromConfig(t.Context(), c)
	if err == nil {
		s.Close()
		t.Fatal("built with the placeholder keytab")
	}
	for _, w := range []string{"kerberosKeytabFilePath", "your-kerberos-keytab"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}
}

// TestCheckpointExampleKerberosFakeKeytab completes the Kerberos example
// with fake but well-formed values: the NameNode's principal from
// hdfs-site.xml, a keytab generated into t.TempDir() holding a key for a
// fake principal, and a krb5.conf whose KDC is a loopback port nothing
// listens on. Building an HDFS client with Kerberos logs in first, and a
// login must reach the KDC (there is no test KDC here), so building fails;
// the test shows the failure is about reaching the KDC, names the
// principal and the keytab's path but no key material, and that the
// NameNode of the example (localhost:9000) was not what failed.
func TestCheckpointExampleKerberosFakeKeytab(t *testing.T) {
	isolateEnv(t)
	dir := t.TempDir()
	site := `<?xml version="1.0"?><configuration>
<property><name>dfs.namenode.kerberos.principal</name><value>nn/_HOST@STOWAGE.TEST</value></property>
</configuration>`
	if err := os.WriteFile(filepath.Join(dir, "hdfs-site.xml"), []byte(site), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HADOOP_CONF_DIR", dir)
	const principal, password = "seatunnel/engine@STOWAGE.TEST", "fake-keytab-password-7c1e"
	kt := keytab.New()
	if err := kt.AddEntry("seatunnel/engine", "STOWAGE.TEST", password, time.Unix(1700000000, 0), 1, etypeID.AES256_CTS_HMAC_SHA1_96); err != nil {
		t.Fatal(err)
	}
	b, err := kt.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	keytabPath := filepath.Join(dir, "seatunnel.keytab")
	if err := os.WriteFile(keytabPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	kdc := closedPorts(t, 1)[0]
	// udp_preference_limit 1: TCP only, so a closed port is refused at
	// once instead of waiting on a UDP read.
	krb5 := "[libdefaults]\n  default_realm = STOWAGE.TEST\n  udp_preference_limit = 1\n[realms]\n  STOWAGE.TEST = {\n    kdc = " + kdc + "\n  }\n"
	krb5Path := filepath.Join(dir, "krb5.conf")
	if err := os.WriteFile(krb5Path, []byte(krb5), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KRB5_CONFIG", krb5Path)

	c, err := config.Parse(readSeatunnelExample(t, "checkpoint-12-hdfs-kerberos.yaml", false), nil)
	if err != nil {
		t.Fatal(err)
	}
	pc := c.Engine.Checkpoint.Storage.PluginConfig
	if pc["kerberosPrincipal"] != "your-kerberos-principal" || pc["kerberosKeytabFilePath"] != "your-kerberos-keytab" {
		t.Fatalf("example's Kerberos keys: %q, %q", pc["kerberosPrincipal"], pc["kerberosKeytabFilePath"])
	}
	pc["kerberosPrincipal"], pc["kerberosKeytabFilePath"] = principal, keytabPath
	s, err := buildFromConfig(t.Context(), c)
	if err == nil {
		s.Close()
		t.Fatal("built with no KDC listening")
	}
	t.Logf("build error: %v", err)
	if !errors.Is(err, hdfs.ErrKerberos) {
		t.Errorf("error %q does not match hdfs.ErrKerberos", err)
	}
	for _, w := range []string{"KDC", kdc, principal, keytabPath} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name %s", err, w)
		}
	}
	for _, no := range []string{password, "localhost:9000", "your-kerberos"} {
		if strings.Contains(err.Error(), no) {
			t.Errorf("error %q contains %q", err, no)
		}
	}
}

// TestCheckpointExampleCacheHDFS completes the client-cache example. Its
// fs.defaultFS hdfs:/// names no NameNode; Hadoop too refuses it ("no
// authority"), so the sensible value is the NameNode of the user's
// cluster, hdfs://host:port, with the example's other keys
// (disable.cache: false) kept. The HDFS back end connects while it is
// built, so with the MiniDFSCluster of testdata/hdfs (STOWAGE_TEST_HDFS)
// the storage is built twice (the second one shares the cached client),
// stores and reads back; without one, the NameNode is a loopback port
// nothing listens on and building must fail naming it as unreachable.
func TestCheckpointExampleCacheHDFS(t *testing.T) {
	isolateEnv(t)
	c, err := config.Parse(readSeatunnelExample(t, "checkpoint-15-cache-hdfs.yaml", false), nil)
	if err != nil {
		t.Fatal(err)
	}
	pc := c.Engine.Checkpoint.Storage.PluginConfig
	if pc["fs.defaultFS"] != "hdfs:///" || pc["disable.cache"] != "false" {
		t.Fatalf("example's fs.defaultFS %q, disable.cache %q", pc["fs.defaultFS"], pc["disable.cache"])
	}
	if nn := os.Getenv("STOWAGE_TEST_HDFS"); nn != "" {
		if conf := os.Getenv("STOWAGE_TEST_HDFS_CONF"); conf != "" {
			t.Setenv("HADOOP_CONF_DIR", conf)
		}
		pc["fs.defaultFS"] = "hdfs://" + nn
		if err := c.Validate(); err != nil {
			t.Fatal(err)
		}
		s, err := buildFromConfig(t.Context(), c)
		if err != nil {
			t.Fatalf("build on the test cluster: %v", err)
		}
		defer s.Close()
		again, err := buildFromConfig(t.Context(), c)
		if err != nil {
			t.Fatalf("second build on the test cluster: %v", err)
		}
		defer again.Close()
		job := "examples-" + strings.ReplaceAll(t.Name(), "/", "-")
		if _, err := s.StoreCheckpoint(t.Context(), checkpointtest.State(job, 1, 1)); err != nil {
			t.Fatal(err)
		}
		got, err := again.GetLatestCheckpointByJobAndPipeline(t.Context(), job, 1)
		if err != nil || got.CheckpointID != 1 {
			t.Fatalf("latest through the second storage = %d, %v", got.CheckpointID, err)
		}
		if err := s.DeleteCheckpoint(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		return
	}
	nn := closedPorts(t, 1)[0]
	pc["fs.defaultFS"] = "hdfs://" + nn
	// One attempt, no failover rounds with backoff.
	pc["seatunnel.hadoop.dfs.client.failover.max.attempts"] = "0"
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	s, err := buildFromConfig(t.Context(), c)
	if err == nil {
		s.Close()
		t.Fatal("built with no NameNode listening")
	}
	t.Logf("build error: %v", err)
	if !errors.Is(err, hdfs.ErrNameNodeUnreachable) || !strings.Contains(err.Error(), nn) {
		t.Errorf("error %q is not hdfs.ErrNameNodeUnreachable naming %s", err, nn)
	}
}

// TestCheckpointExampleHDFSHA builds the HA example. The HDFS back end
// connects to a NameNode while it is built (it fetches the server defaults
// before sharing the client), and the example's hosts usdp-bing-nn1/nn2
// exist only on the user's network. So the test keeps every key of the
// example and replaces only the two rpc-address values: with the HA
// MiniDFSCluster of testdata/hdfs (STOWAGE_TEST_HDFS_HA) it builds and
// stores a checkpoint; without one they name two loopback ports nothing
// listens on, and building must fail naming both NameNodes and no other
// host.
func TestCheckpointExampleHDFSHA(t *testing.T) {
	isolateEnv(t)
	c, err := config.Parse(readSeatunnelExample(t, "checkpoint-13-hdfs-ha.yaml", false), nil)
	if err != nil {
		t.Fatal(err)
	}
	pc := c.Engine.Checkpoint.Storage.PluginConfig
	const nn = "seatunnel.hadoop.dfs.namenode.rpc-address.usdp-bing."
	if pc[nn+"nn1"] != "usdp-bing-nn1:8020" || pc[nn+"nn2"] != "usdp-bing-nn2:8020" {
		t.Fatalf("example's NameNodes: %q, %q", pc[nn+"nn1"], pc[nn+"nn2"])
	}
	cluster := strings.Split(os.Getenv("STOWAGE_TEST_HDFS_HA"), ",")
	if len(cluster) == 2 && cluster[0] != "" {
		pc[nn+"nn1"], pc[nn+"nn2"] = cluster[0], cluster[1]
		s, err := buildFromConfig(t.Context(), c)
		if err != nil {
			t.Fatalf("build on the HA test cluster: %v", err)
		}
		defer s.Close()
		job := "examples-" + strings.ReplaceAll(t.Name(), "/", "-")
		if _, err := s.StoreCheckpoint(t.Context(), checkpointtest.State(job, 1, 1)); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetLatestCheckpointByJobAndPipeline(t.Context(), job, 1)
		if err != nil || got.CheckpointID != 1 {
			t.Fatalf("latest = %d, %v", got.CheckpointID, err)
		}
		if err := s.DeleteCheckpoint(t.Context(), job); err != nil {
			t.Fatal(err)
		}
		return
	}
	closed := closedPorts(t, 2)
	pc[nn+"nn1"], pc[nn+"nn2"] = closed[0], closed[1]
	// One pass over both NameNodes, no failover rounds with backoff.
	pc["seatunnel.hadoop.dfs.client.failover.max.attempts"] = "0"
	s, err := buildFromConfig(t.Context(), c)
	if err == nil {
		s.Close()
		t.Fatal("built with no NameNode listening")
	}
	for _, w := range closed {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not name NameNode %s", err, w)
		}
	}
	if strings.Contains(err.Error(), "usdp-bing-nn") {
		t.Errorf("error %q names a host of the example that was replaced", err)
	}
	if !errors.Is(err, hdfs.ErrNameNodeUnreachable) {
		t.Errorf("error %q does not match hdfs.ErrNameNodeUnreachable", err)
	}
}

// closedPorts returns n loopback addresses on which nothing listens: the
// ports were free a moment ago and their listeners are closed.
func closedPorts(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, l.Addr().String())
		l.Close()
	}
	return out
}

// TestDefaultMaxRetainedAgreesWithConfig: a storage given no max-retained
// keeps what config's default max-retained (SeaTunnel's 20) keeps.
func TestDefaultMaxRetainedAgreesWithConfig(t *testing.T) {
	want := config.Default().Engine.Checkpoint.Storage.MaxRetained
	if checkpoint.DefaultMaxRetained != want {
		t.Fatalf("checkpoint.DefaultMaxRetained = %d, config's default max-retained = %d", checkpoint.DefaultMaxRetained, want)
	}
	fsys := newLocal(t)
	s := checkpointtest.Open(t, fsys, checkpoint.Options{})
	if s.MaxRetained() != want {
		t.Fatalf("MaxRetained() = %d, want %d", s.MaxRetained(), want)
	}
	for id := int64(1); id <= int64(want)+3; id++ {
		mustStore(t, s, checkpointtest.State("j", 1, id))
	}
	if files := checkpointtest.CheckpointFiles(t, fsys, "j"); len(files) != want {
		t.Fatalf("%d checkpoint files kept, want %d", len(files), want)
	}
	got, err := s.GetCheckpointsByJobAndPipeline(t.Context(), "j", 1)
	if err != nil || len(got) != want || got[0].CheckpointID != 4 {
		t.Fatalf("kept %d checkpoints from id %v, %v; want %d from 4", len(got), firstID(got), err, want)
	}
}

func firstID(sts []checkpoint.PipelineState) any {
	if len(sts) == 0 {
		return "none"
	}
	return sts[0].CheckpointID
}
