package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsouza/fake-gcs-server/fakestorage"
	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/stowage/stowage/config"
	"github.com/stowage/stowage/internal/testutil/ossserver"
)

// A member process writing its map store and checkpoints to an S3 server
// (gofakes3 on 127.0.0.1, reached over real HTTP by the child) is killed
// with SIGKILL under writers; after each restart every acknowledged write
// is there. One new object per group-commit batch, nothing ever appended.
// Then no output of the run shows a credential (see checkSecrets).
func TestCrashSIGKILLOnS3(t *testing.T) {
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	if err := backend.CreateBucket("crash"); err != nil {
		t.Fatal(err)
	}
	const id, secret, token = "AKIDCRASHS3KEYID01", "s3-crash-secret-value", "s3-crash-session-token"
	crashOn(t, "s3", map[string]string{
		"storage.type":                    "s3",
		"s3.bucket":                       "s3a://crash/stowage",
		"fs.s3a.endpoint":                 srv.URL,
		"fs.s3a.access.key":               id,
		"fs.s3a.secret.key":               secret,
		"fs.s3a.session.token":            token,
		"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider",
	}, badInspect{[]string{"s3.bucket=s3a://no-such-bucket/stowage"}, "NoSuchBucket"}, id, secret, token)
}

// The same on Tencent COS through its S3-compatible protocol.
func TestCrashSIGKILLOnCOS(t *testing.T) {
	backend := s3mem.New()
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	defer srv.Close()
	if err := backend.CreateBucket("crash-1250000000"); err != nil {
		t.Fatal(err)
	}
	const id, secret = "AKIDCRASHCOSSECRETID", "cos-crash-secret-key"
	crashOn(t, "cos", map[string]string{
		"storage.type":               "cos",
		"cos.bucket":                 "cosn://crash-1250000000/stowage",
		"fs.cosn.bucket.region":      "ap-guangzhou",
		"fs.cosn.endpoint":           srv.URL,
		"fs.cosn.userinfo.secretId":  id,
		"fs.cosn.userinfo.secretKey": secret,
	}, badInspect{[]string{"cos.bucket=cosn://no-such-bucket-1250000000/stowage"}, "NoSuchBucket"}, id, secret)
}

// The same on Aliyun OSS (the in-process OSS-protocol server, which checks
// request signatures and security tokens, and forbid-overwrite). Its
// answer to a wrong secret quotes the access key id, as OSS does.
func TestCrashSIGKILLOnOSS(t *testing.T) {
	const id, secret, token = "STS.LTAI5tCrashKeyId", "oss-crash-secret-value", "oss-crash-security-token"
	srv := ossserver.New(ossserver.Options{
		Credentials: []ossserver.Credential{{AccessKeyID: id, AccessKeySecret: secret, SecurityToken: token}},
		Buckets:     []string{"crash"},
	})
	defer srv.Close()
	crashOn(t, "oss", map[string]string{
		"storage.type":           "oss",
		"oss.bucket":             "oss://crash/stowage",
		"fs.oss.endpoint":        srv.Endpoint(),
		"fs.oss.accessKeyId":     id,
		"fs.oss.accessKeySecret": secret,
		"fs.oss.securityToken":   token,
	}, badInspect{[]string{"fs.oss.accessKeySecret=wrong-" + secret, "fs.oss.attempts.maximum=1"}, "SignatureDoesNotMatch"}, id, secret, token)
}

// The same on Google Cloud Storage (fake-gcs-server listening on
// 127.0.0.1), with a service account key file whose token endpoint is a
// fake on 127.0.0.1 handing out an access token.
func TestCrashSIGKILLOnGCS(t *testing.T) {
	srv, err := fakestorage.NewServerWithOptions(fakestorage.Options{Scheme: "http", Host: "127.0.0.1", PublicHost: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	srv.CreateBucket("crash")
	const accessToken = "ya29.gcs-crash-access-token"
	tokens := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":3600}`, accessToken)
	}))
	defer tokens.Close()
	keyFile, keyID, pemBody := writeServiceAccountKey(t, tokens.URL+"/token")
	crashOn(t, "gcs", map[string]string{
		"storage.type":           "gcs",
		"gcs.bucket":             "gs://crash/stowage",
		"fs.gs.storage.root.url": srv.URL(),
		"fs.gs.auth.service.account.json.keyfile": keyFile,
	}, badInspect{[]string{"gcs.bucket=gs://no-such-bucket/stowage"}, ""}, keyID, pemBody, "PRIVATE KEY", accessToken)
}

// writeServiceAccountKey writes a service account key file with a fresh
// RSA key whose tokens come from tokenURI, and returns its path, its
// private key id and one line of the key's PEM body.
func writeServiceAccountKey(t *testing.T, tokenURI string) (path, keyID, pemLine string) {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	keyID = "crash-private-key-id-0123456789"
	data, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "crash", "private_key_id": keyID, "private_key": pemKey,
		"client_email": "crash@crash.iam.gserviceaccount.com", "client_id": "1", "token_uri": tokenURI,
	})
	path = filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path, keyID, strings.Split(pemKey, "\n")[1]
}

// badInspect makes inspect fail against the storage, for its errors:
// props (KEY=VALUE) override the configuration's, and the error must
// name want.
type badInspect struct {
	props []string
	want  string
}

// crashOn runs the SIGKILL rounds on the storage props describe, then
// checks that no secret value shows anywhere (checkSecrets).
func crashOn(t *testing.T, kind string, props map[string]string, bad badInspect, secrets ...string) {
	dir := t.TempDir()
	cfgDir := filepath.Join(dir, "config")
	if err := writeConfigDirOn(cfgDir, "crash"+kind, "/imap", "/checkpoint/", netSpec{}, props); err != nil {
		t.Fatal(err)
	}
	mapName := "engine_crash_" + kind
	wl := newWorkload(mapName, 8, 40)
	var out bytes.Buffer
	logPath := filepath.Join(dir, "node.log")
	res, err := crashRounds(context.Background(), cfgDir, logPath, wl, 3, &out)
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
	checkSecrets(t, cfgDir, logPath, mapName, wl, &out, bad, secrets)
}

// checkSecrets gathers all output of the run on one storage: the log and
// standard error of every member process (the SIGKILLed ones, and one more
// run at debug level that writes and stops with SIGTERM), the crash rounds'
// report, stowage inspect (maps, verify, compact, stats, dump, checkpoints
// list, and inspect made to fail), and the configuration
// dump; and
// fails if any of the secret values appears in it.
func checkSecrets(t *testing.T, cfgDir, logPath, mapName string, wl *workload, report *bytes.Buffer, bad badInspect, secrets []string) {
	t.Helper()
	var all strings.Builder
	all.WriteString(report.String())

	debugLog := debugNodeRun(t, cfgDir, filepath.Join(filepath.Dir(logPath), "debug.log"), wl)
	if !strings.Contains(debugLog, "level=DEBUG") {
		t.Fatalf("the member run with -v logged nothing at debug level:\n%s", debugLog)
	}
	all.WriteString(debugLog)
	logs, err := os.ReadFile(logPath)
	if err != nil || len(logs) == 0 {
		t.Fatalf("no member log at %s: %v", logPath, err)
	}
	all.Write(logs)

	inspect := func(wantOK bool, args ...string) string {
		var o, e bytes.Buffer
		code := run(append([]string{"inspect", "--config-dir", cfgDir}, args...), &o, &e)
		if (code == 0) != wantOK {
			t.Fatalf("inspect %s exited %d:\n%s%s", strings.Join(args, " "), code, o.String(), e.String())
		}
		all.WriteString(o.String())
		all.WriteString(e.String())
		return o.String() + e.String()
	}
	if o := inspect(true, "maps"); strings.TrimSpace(o) != mapName {
		t.Fatalf("inspect maps = %q, want %s", o, mapName)
	}
	inspect(true, "verify")
	inspect(true, "--json", "stats", mapName)
	inspect(true, "stats", mapName)
	inspect(true, "dump", mapName)
	inspect(true, "compact", mapName)
	var st struct {
		Entries  int `json:"entries"`
		LogFiles int `json:"log_files"`
	}
	if o := inspect(true, "--json", "stats", mapName); json.Unmarshal([]byte(o), &st) != nil || st.LogFiles != 0 || st.Entries == 0 {
		t.Fatalf("stats after compact: %s", o)
	}
	inspect(true, "checkpoints", "list")
	var args []string
	for _, kv := range bad.props {
		args = append(args, "--property", kv)
	}
	if o := inspect(false, append(args, "maps")...); !strings.Contains(o, "stowage inspect:") || !strings.Contains(o, bad.want) {
		t.Fatalf("inspect with %v failed without an error naming %q: %q", bad.props, bad.want, o)
	}

	cfg, err := config.Load(cfgDir)
	if err != nil {
		t.Fatal(err)
	}
	dump := cfg.String()
	if !strings.Contains(dump, config.Redacted) {
		t.Fatalf("configuration dump redacts nothing:\n%s", dump)
	}
	all.WriteString(dump)

	text := all.String()
	var pairs []string
	for _, s := range secrets {
		pairs = append(pairs, s, "<SECRET>")
	}
	hide := strings.NewReplacer(pairs...) // every secret, not only the one found, stays out of the test log
	for _, s := range secrets {
		if i := strings.Index(text, s); i >= 0 {
			from, to := max(0, i-200), min(len(text), i+len(s)+100)
			t.Errorf("secret %q… appears in the output of the run:\n%s", s[:4], hide.Replace(text[from:to]))
		}
	}
	t.Logf("searched %d KiB of member logs, inspect output and configuration dump for %d secret values", len(text)>>10, len(secrets))
}

// debugNodeRun starts one more member on cfgDir with -v (debug logging,
// standard error to logPath), writes through it for a moment, stops it
// with SIGTERM, and returns what it logged.
func debugNodeRun(t *testing.T, cfgDir, logPath string, wl *workload) string {
	t.Helper()
	ctx := context.Background()
	c, err := startNode(ctx, cfgDir, logPath, "-v", "--leave-timeout", "5s")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.waitHealthy(ctx, time.Minute); err != nil {
		c.kill()
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	wl.run(wctx, func() []string { return []string{c.addr} }, 0, 1)
	cancel()
	if err := c.stop(); err != nil {
		t.Logf("member with -v: %v", err)
	}
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
