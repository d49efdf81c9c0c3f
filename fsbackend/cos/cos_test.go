package cos_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/cos"
	"github.com/stowage/stowage/fsbackend/fsbackendtest"
	"github.com/stowage/stowage/fsbackend/internal/objstore/s3test"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	testID     = "AKIDCOSSTATICID0001"
	testSecret = "cos-static-secret-never-printed"
	envID      = "AKIDCOSFROMENVIRONMENT"
	envSecret  = "cos-env-secret-never-printed"
)

var seq atomic.Int64

// newServer starts gofakes3 checking that every request is signed with
// the static or the environment test keys.
func newServer(t *testing.T) *s3test.Server {
	return s3test.NewServer(t, s3test.Credential{AccessKeyID: testID, SecretAccessKey: testSecret},
		s3test.Credential{AccessKeyID: envID, SecretAccessKey: envSecret})
}

func props(t *testing.T, srv *s3test.Server) fsbackend.Properties {
	t.Helper()
	b := fmt.Sprintf("bucket%d-1250000000", seq.Add(1))
	srv.CreateBucket(t, b)
	return fsbackend.Properties{
		"storage.type":                 "cos",
		"cos.bucket":                   "cosn://" + b + "/ckpt",
		"fs.cosn.bucket.region":        "ap-guangzhou",
		"fs.cosn.endpoint":             srv.URL,
		"fs.cosn.userinfo.secretId":    testID,
		"fs.cosn.userinfo.secretKey":   testSecret,
		"fs.cosn.credentials.provider": "org.apache.hadoop.fs.cosn.auth.SimpleCredentialsProvider",
	}
}

func open(t *testing.T, p fsbackend.Properties) fsbackend.FS {
	t.Helper()
	f, err := fsbackend.Open(context.Background(), p)
	if err != nil {
		t.Fatalf("fsbackend.Open(%s): %v", p, err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestConformanceGofakes3(t *testing.T) {
	srv := newServer(t)
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS {
		return open(t, props(t, srv))
	}, fsbackendtest.Options{LargeFile: 1 << 20})
}

func TestConformanceMoto(t *testing.T) {
	ep := s3test.ExternalEndpoint(t)
	fsbackendtest.RunWith(t, func(t *testing.T) fsbackend.FS {
		return open(t, motoProps(t, ep))
	}, fsbackendtest.Options{LargeFile: 1 << 20})
}

// TestForbidOverwriteHeader: every PUT carries COS's no-overwrite header
// besides If-None-Match.
func TestForbidOverwriteHeader(t *testing.T) {
	srv := newServer(t)
	f := open(t, props(t, srv))
	for i := 0; i < 3; i++ {
		if err := fsbackend.WriteFile(context.Background(), f, fmt.Sprintf("x/%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if n := srv.VendorHeaders()["x-cos-forbid-overwrite: true"]; n != 3 {
		t.Fatalf("x-cos-forbid-overwrite sent on %d PUTs, want 3 (%v)", n, srv.VendorHeaders())
	}
}

func TestEndpointAndAddressing(t *testing.T) {
	cases := []struct {
		name      string
		p         fsbackend.Properties
		endpoint  string
		pathStyle bool
		bucket    string
		prefix    string
	}{
		{"real COS by region", fsbackend.Properties{"cos.bucket": "cosn://ex-1250000000/a/b", "fs.cosn.bucket.region": "ap-shanghai"},
			"https://cos.ap-shanghai.myqcloud.com", false, "ex-1250000000", "a/b"},
		{"endpoint suffix", fsbackend.Properties{"cos.bucket": "cosn://ex-1250000000", "fs.cosn.bucket.region": "ap-beijing", "fs.cosn.bucket.endpoint_suffix": "cos-internal.ap-beijing.tencentcos.cn"},
			"https://cos-internal.ap-beijing.tencentcos.cn", false, "ex-1250000000", ""},
		{"endpoint override", fsbackend.Properties{"cos.bucket": "cos://ex-1250000000", "fs.cosn.endpoint": "http://127.0.0.1:9000"},
			"http://127.0.0.1:9000", true, "ex-1250000000", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.p["fs.cosn.userinfo.secretId"], c.p["fs.cosn.userinfo.secretKey"] = "id", "key"
			o, err := cos.ParseProperties(context.Background(), c.p)
			if err != nil {
				t.Fatal(err)
			}
			if o.Endpoint != c.endpoint || o.PathStyle != c.pathStyle || o.Bucket != c.bucket || o.Prefix != c.prefix || !o.ChecksumWhenRequired {
				t.Fatalf("options %+v", o)
			}
		})
	}
}

func TestBadProperties(t *testing.T) {
	cases := []struct {
		name string
		p    fsbackend.Properties
		want string
	}{
		{"no bucket", fsbackend.Properties{"fs.cosn.bucket.region": "ap-guangzhou"}, "cos.bucket"},
		{"wrong scheme", fsbackend.Properties{"cos.bucket": "s3a://b", "fs.cosn.bucket.region": "ap-guangzhou"}, "cos.bucket"},
		{"no region", fsbackend.Properties{"cos.bucket": "cosn://b-1"}, "fs.cosn.bucket.region"},
		{"bad path style", fsbackend.Properties{"cos.bucket": "cosn://b-1", "fs.cosn.bucket.region": "r", "fs.cosn.path.style.access": "x"}, "fs.cosn.path.style.access"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.p["fs.cosn.userinfo.secretId"], c.p["fs.cosn.userinfo.secretKey"] = testID, testSecret
			_, err := cos.ParseProperties(context.Background(), c.p)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one naming %s", err, c.want)
			}
			if strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), testID) {
				t.Fatalf("error shows a secret: %v", err)
			}
		})
	}
}

func TestCredentialProviders(t *testing.T) {
	cases := []struct {
		name      string
		provider  string
		static    bool
		env       map[string]string
		wantKeyID string
		wantErr   []string
	}{
		{name: "static", provider: "org.apache.hadoop.fs.cosn.auth.SimpleCredentialsProvider", static: true, wantKeyID: testID},
		{name: "static by default", static: true, wantKeyID: testID},
		{name: "environment", provider: "org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider",
			env: map[string]string{"COSN_SECRET_ID": envID, "COSN_SECRET_KEY": envSecret}, wantKeyID: envID},
		{name: "environment by default", env: map[string]string{"COSN_SECRET_ID": envID, "COSN_SECRET_KEY": envSecret}, wantKeyID: envID},
		{name: "list falls through", provider: "org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider,org.apache.hadoop.fs.cosn.auth.SimpleCredentialsProvider",
			static: true, wantKeyID: testID},
		{name: "environment missing", provider: "org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider",
			wantErr: []string{"COSN_SECRET_ID", "COSN_SECRET_KEY", "fs.cosn.credentials.provider"}},
		{name: "environment half set", provider: "org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider",
			env: map[string]string{"COSN_SECRET_ID": envID}, wantErr: []string{"not set: COSN_SECRET_KEY"}},
		{name: "simple without keys", provider: "org.apache.hadoop.fs.cosn.auth.SimpleCredentialsProvider",
			wantErr: []string{"fs.cosn.userinfo.secretId", "fs.cosn.userinfo.secretKey"}},
		{name: "unknown", provider: "com.qcloud.cos.auth.MyProvider",
			wantErr: []string{`"com.qcloud.cos.auth.MyProvider"`, "known:", "org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider", "org.apache.hadoop.fs.cosn.auth.SimpleCredentialsProvider"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, v := range []string{"COSN_SECRET_ID", "COSN_SECRET_KEY"} {
				t.Setenv(v, "")
				os.Unsetenv(v)
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			srv := newServer(t)
			p := props(t, srv)
			delete(p, "fs.cosn.credentials.provider")
			if c.provider != "" {
				p["fs.cosn.credentials.provider"] = c.provider
			}
			if !c.static {
				delete(p, "fs.cosn.userinfo.secretId")
				delete(p, "fs.cosn.userinfo.secretKey")
			}
			f, err := fsbackend.Open(context.Background(), p)
			if len(c.wantErr) > 0 {
				if err == nil {
					f.Close()
					t.Fatal("Open succeeded, want an error")
				}
				for _, w := range c.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not name %s", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer f.Close()
			if err := fsbackend.WriteFile(context.Background(), f, "x", []byte("1")); err != nil {
				t.Fatal(err)
			}
			if ids := srv.KeyIDs(); len(ids) != 1 || ids[c.wantKeyID] == 0 {
				t.Fatalf("server saw key ids %v, want only %s", ids, c.wantKeyID)
			}
			if n := srv.Denied(); n != 0 {
				t.Fatalf("%d requests refused for their signature", n)
			}
		})
	}
}

func TestSecretsNeverLeak(t *testing.T) {
	var logBuf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)
	t.Setenv("COSN_SECRET_ID", envID)
	t.Setenv("COSN_SECRET_KEY", envSecret)

	ctx := context.Background()
	srv := newServer(t)
	p := props(t, srv)
	p["fs.cosn.maxRetries"] = "2"
	p["fs.cosn.retry.interval"] = "1ms"
	f := open(t, p)
	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	note(fsbackend.WriteFile(ctx, f, "a", []byte("1")))
	note(fsbackend.WriteFile(ctx, f, "a", []byte("2")))
	note(f.Remove(ctx, "missing"))
	srv.FailFirst.Store(1000)
	note(fsbackend.WriteFile(ctx, f, "b", []byte("3")))
	srv.FailFirst.Store(0)
	for _, bad := range []fsbackend.Properties{
		{"cos.bucket": "oss://x", "fs.cosn.userinfo.secretId": testID, "fs.cosn.userinfo.secretKey": testSecret},
		{"cos.bucket": "cosn://x-1", "fs.cosn.bucket.region": "r", "fs.cosn.userinfo.secretKey": testSecret, "fs.cosn.credentials.provider": "org.apache.hadoop.fs.cosn.auth.SimpleCredentialsProvider"},
		{"cos.bucket": "cosn://x-1", "fs.cosn.bucket.region": "r", "fs.cosn.credentials.provider": "a.B"},
	} {
		_, err := fsbackend.Open(ctx, bad)
		if err == nil {
			t.Fatalf("Open(%s) succeeded", bad)
		}
		note(err)
	}
	if len(errs) < 6 {
		t.Fatalf("only %d errors: %v", len(errs), errs)
	}
	if !strings.Contains(logBuf.String(), "retrying") {
		t.Fatal("no retry logged at debug level")
	}
	all := logBuf.String() + p.String()
	for _, err := range errs {
		all += "\n" + err.Error()
	}
	for _, s := range []string{testID, testSecret, envID, envSecret} {
		if strings.Contains(all, s) {
			t.Errorf("secret %q appears in logs or errors:\n%s", s, all)
		}
	}
}

// TestWrongSecretRefused: the test server checks SigV4 signatures, so a
// wrong secret key (static or from COSN_SECRET_KEY) fails the write with
// 403 SignatureDoesNotMatch, stores nothing, and the error holds neither
// the secret nor the secret id.
func TestWrongSecretRefused(t *testing.T) {
	const wrong = "cos-wrong-secret-never-printed"
	for _, env := range []bool{false, true} {
		t.Run(fmt.Sprintf("environment=%v", env), func(t *testing.T) {
			srv := newServer(t)
			p := props(t, srv)
			p["fs.cosn.maxRetries"] = "0"
			p["fs.cosn.userinfo.secretKey"] = wrong
			if env {
				t.Setenv("COSN_SECRET_ID", envID)
				t.Setenv("COSN_SECRET_KEY", wrong)
				delete(p, "fs.cosn.userinfo.secretId")
				delete(p, "fs.cosn.userinfo.secretKey")
				p["fs.cosn.credentials.provider"] = "org.apache.hadoop.fs.cosn.auth.EnvironmentVariableCredentialsProvider"
			}
			f := open(t, p)
			err := fsbackend.WriteFile(context.Background(), f, "x", []byte("1"))
			if err == nil {
				t.Fatal("write with a wrong secret succeeded")
			}
			if !strings.Contains(err.Error(), "SignatureDoesNotMatch") || !strings.Contains(err.Error(), "403") {
				t.Fatalf("err = %v, want 403 SignatureDoesNotMatch", err)
			}
			for _, s := range []string{wrong, testSecret, envSecret, testID, envID} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error shows %q: %v", s, err)
				}
			}
			if srv.Denied() == 0 {
				t.Fatal("server refused nothing")
			}
			if l, err := f.List(context.Background(), ""); err == nil || len(l) != 0 {
				t.Fatalf("listing with a wrong secret: %v, %v; want refused", l, err)
			}
		})
	}
}
