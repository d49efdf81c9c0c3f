package s3_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore/s3test"
	"github.com/stowage/stowage/fsbackend/s3"
)

const (
	envKeyID  = "AKIDFROMENVIRONMENT"
	envSecret = "env-secret-value-never-printed"
	envToken  = "env-session-token-never-printed"
)

// clearAWSEnv unsets every variable a provider could read, for the test.
func clearAWSEnv(t *testing.T) {
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_ACCESS_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_SECRET_KEY", "AWS_SESSION_TOKEN",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AWS_ROLE_SESSION_NAME", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_STS",
		"AWS_EC2_METADATA_SERVICE_ENDPOINT", "AWS_CONTAINER_AUTHORIZATION_TOKEN", "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"} {
		t.Setenv(v, "")
		os.Unsetenv(v)
	}
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
}

// TestCredentialProviders: each provider class signs with the keys it
// should, and a missing key or variable is an error naming it.
func TestCredentialProviders(t *testing.T) {
	cases := []struct {
		name      string
		provider  string
		static    bool              // set fs.s3a.access.key / secret.key
		env       map[string]string // environment for the case
		wantKeyID string            // key id the server must see
		wantErr   []string          // error must name each
	}{
		{name: "static", provider: "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider", static: true, wantKeyID: testKeyID},
		{name: "static by default", static: true, wantKeyID: testKeyID},
		{name: "environment", provider: "com.amazonaws.auth.EnvironmentVariableCredentialsProvider",
			env: map[string]string{"AWS_ACCESS_KEY_ID": envKeyID, "AWS_SECRET_ACCESS_KEY": envSecret, "AWS_SESSION_TOKEN": envToken}, wantKeyID: envKeyID},
		{name: "environment, sdk v2 spelling", provider: "software.amazon.awssdk.auth.credentials.EnvironmentVariableCredentialsProvider",
			env: map[string]string{"AWS_ACCESS_KEY_ID": envKeyID, "AWS_SECRET_ACCESS_KEY": envSecret}, wantKeyID: envKeyID},
		{name: "default chain reads environment", provider: "com.amazonaws.auth.DefaultAWSCredentialsProviderChain",
			env: map[string]string{"AWS_ACCESS_KEY_ID": envKeyID, "AWS_SECRET_ACCESS_KEY": envSecret}, wantKeyID: envKeyID},
		{name: "list falls through to static", provider: "com.amazonaws.auth.EnvironmentVariableCredentialsProvider, org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
			static: true, wantKeyID: testKeyID},
		{name: "list takes the first that works", provider: "com.amazonaws.auth.EnvironmentVariableCredentialsProvider,org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
			static: true, env: map[string]string{"AWS_ACCESS_KEY_ID": envKeyID, "AWS_SECRET_ACCESS_KEY": envSecret}, wantKeyID: envKeyID},
		{name: "environment missing", provider: "com.amazonaws.auth.EnvironmentVariableCredentialsProvider",
			wantErr: []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "fs.s3a.aws.credentials.provider"}},
		{name: "environment half set", provider: "com.amazonaws.auth.EnvironmentVariableCredentialsProvider",
			env: map[string]string{"AWS_ACCESS_KEY_ID": envKeyID}, wantErr: []string{"not set: AWS_SECRET_ACCESS_KEY"}},
		{name: "simple without keys", provider: "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
			wantErr: []string{"fs.s3a.access.key", "fs.s3a.secret.key"}},
		{name: "temporary without token", provider: "org.apache.hadoop.fs.s3a.TemporaryAWSCredentialsProvider", static: true,
			wantErr: []string{"fs.s3a.session.token"}},
		{name: "web identity missing", provider: "com.amazonaws.auth.WebIdentityTokenCredentialsProvider",
			wantErr: []string{"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_ROLE_ARN"}},
		{name: "container missing", provider: "com.amazonaws.auth.ContainerCredentialsProvider",
			wantErr: []string{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"}},
		{name: "unknown", provider: "com.example.MyProvider",
			wantErr: []string{`"com.example.MyProvider"`, "known:", "com.amazonaws.auth.EnvironmentVariableCredentialsProvider", "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clearAWSEnv(t)
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			srv := s3test.NewServer(t, s3test.Credential{AccessKeyID: testKeyID, SecretAccessKey: testSecret},
				s3test.Credential{AccessKeyID: envKeyID, SecretAccessKey: envSecret, SessionToken: c.env["AWS_SESSION_TOKEN"]})
			p := props(t, srv)
			delete(p, "fs.s3a.aws.credentials.provider")
			if c.provider != "" {
				p["fs.s3a.aws.credentials.provider"] = c.provider
			}
			if !c.static {
				delete(p, "fs.s3a.access.key")
				delete(p, "fs.s3a.secret.key")
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
			ids := srv.KeyIDs()
			if len(ids) != 1 || ids[c.wantKeyID] == 0 {
				t.Fatalf("server saw key ids %v, want only %s", ids, c.wantKeyID)
			}
			if n := srv.Denied(); n != 0 {
				t.Fatalf("%d requests refused for their signature or token", n)
			}
		})
	}
}

func TestKnownProviders(t *testing.T) {
	known := s3.KnownProviders()
	for _, want := range []string{
		"org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
		"com.amazonaws.auth.EnvironmentVariableCredentialsProvider",
		"com.amazonaws.auth.DefaultAWSCredentialsProviderChain",
		"com.amazonaws.auth.InstanceProfileCredentialsProvider",
		"com.amazonaws.auth.ContainerCredentialsProvider",
		"com.amazonaws.auth.WebIdentityTokenCredentialsProvider",
		"org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider",
	} {
		found := false
		for _, k := range known {
			found = found || k == want
		}
		if !found {
			t.Errorf("%s is not a known provider", want)
		}
	}
}

// TestWebIdentityConfigured: with the IRSA variables set, the provider
// builds (no STS call happens until credentials are needed).
func TestWebIdentityConfigured(t *testing.T) {
	clearAWSEnv(t)
	tok := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tok, []byte("jwt"), 0o600)
	t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tok)
	t.Setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/stowage")
	o, err := s3.ParseProperties(context.Background(), fsbackend.Properties{"s3.bucket": "s3a://b",
		"fs.s3a.aws.credentials.provider": "com.amazonaws.auth.WebIdentityTokenCredentialsProvider"})
	if err != nil || o.Credentials == nil {
		t.Fatalf("ParseProperties: %+v, %v", o.CredentialsID, err)
	}
}

// TestSecretsNeverLeak runs successful and failing operations with debug
// logging on and checks that no secret value is in any log line or error.
func TestSecretsNeverLeak(t *testing.T) {
	clearAWSEnv(t)
	var logBuf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)

	var errs []error
	note := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	ctx := context.Background()
	srv := s3test.NewServer(t, s3test.Credential{AccessKeyID: testKeyID, SecretAccessKey: testSecret, SessionToken: envToken})
	p := props(t, srv, "fs.s3a.session.token", envToken, "fs.s3a.retry.interval", "1ms", "fs.s3a.retry.limit", "3")
	f := open(t, p)
	note(fsbackend.WriteFile(ctx, f, "a", []byte("1")))
	note(fsbackend.WriteFile(ctx, f, "a", []byte("2"))) // exists
	_, err := f.Open(ctx, "missing")
	note(err)
	note(f.Remove(ctx, "missing"))
	srv.FailAlways.Store(true)
	note(fsbackend.WriteFile(ctx, f, "b", []byte("3"))) // retried, then fails
	srv.FailAlways.Store(false)
	// Configuration errors with secrets present in the properties.
	for _, bad := range []fsbackend.Properties{
		{"s3.bucket": "gs://wrong", "fs.s3a.access.key": testKeyID, "fs.s3a.secret.key": testSecret},
		{"s3.bucket": "s3a://b", "fs.s3a.access.key": testKeyID, "fs.s3a.secret.key": testSecret, "fs.s3a.aws.credentials.provider": "x.Y"},
		{"s3.bucket": "s3a://b", "fs.s3a.secret.key": testSecret},
		{"s3.bucket": "s3a://b", "fs.s3a.access.key": testKeyID, "fs.s3a.secret.key": testSecret, "fs.s3a.session.token": envToken,
			"fs.s3a.aws.credentials.provider": "com.amazonaws.auth.EnvironmentVariableCredentialsProvider"},
	} {
		_, err := fsbackend.Open(ctx, bad)
		if err == nil {
			t.Fatalf("Open(%s) succeeded", bad)
		}
		note(err)
	}
	if len(errs) < 7 {
		t.Fatalf("only %d errors collected: %v", len(errs), errs)
	}
	if !strings.Contains(logBuf.String(), "retrying") {
		t.Fatalf("no retry was logged at debug level: %q", logBuf.String())
	}
	all := logBuf.String() + "\n" + p.String()
	for _, err := range errs {
		all += "\n" + err.Error()
	}
	for _, secret := range []string{testSecret, envToken, testKeyID} {
		if strings.Contains(all, secret) {
			t.Errorf("secret %q appears in logs or errors:\n%s", secret, all)
		}
	}
}
