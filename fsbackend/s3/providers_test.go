package s3_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stowage/stowage/fsbackend"
	"github.com/stowage/stowage/fsbackend/internal/objstore/s3test"
)

// Credentials handed out by the fake IMDS, container endpoint and STS;
// each provider gets its own, so the S3 server's view tells which
// provider signed.
var (
	instanceCred  = s3test.Credential{AccessKeyID: "ASIAINSTANCEPROFILE1", SecretAccessKey: "instance-secret-never-printed", SessionToken: "instance-token-never-printed"}
	containerCred = s3test.Credential{AccessKeyID: "ASIACONTAINERROLE01", SecretAccessKey: "container-secret-never-printed", SessionToken: "container-token-never-printed"}
	webIDCred     = s3test.Credential{AccessKeyID: "ASIAWEBIDENTITY0001", SecretAccessKey: "webid-secret-never-printed", SessionToken: "webid-token-never-printed"}
)

// calls records the requests a fake credentials endpoint got.
type calls struct {
	mu   sync.Mutex
	seen []string
	bad  []string // requests that broke the protocol
}

func (c *calls) note(seen string, bad string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, seen)
	if bad != "" {
		c.bad = append(c.bad, bad)
	}
}

func (c *calls) check(t *testing.T, wantSeen ...string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bad) > 0 {
		t.Fatalf("credentials endpoint got bad requests: %q", c.bad)
	}
	all := strings.Join(c.seen, "\n")
	for _, w := range wantSeen {
		if !strings.Contains(all, w) {
			t.Fatalf("credentials endpoint requests %q lack %q", c.seen, w)
		}
	}
}

func credJSON(c s3test.Credential) []byte {
	b, _ := json.Marshal(map[string]string{
		"Code": "Success", "Type": "AWS-HMAC", "LastUpdated": time.Now().UTC().Format(time.RFC3339),
		"AccessKeyId": c.AccessKeyID, "SecretAccessKey": c.SecretAccessKey, "Token": c.SessionToken,
		"Expiration": time.Now().Add(6 * time.Hour).UTC().Format(time.RFC3339),
	})
	return b
}

// fakeIMDS answers IMDSv2 as an EC2 instance with role "stowage-role":
// a session token first, then the role list and the role's credentials,
// each only with that session token.
func fakeIMDS(t *testing.T, cred s3test.Credential) (*httptest.Server, *calls) {
	const session = "imds-session-token"
	c := &calls{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && r.URL.Path == "/latest/api/token" {
			bad := ""
			if r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds") == "" {
				bad = "token request without a TTL"
			}
			c.note("PUT "+r.URL.Path, bad)
			w.Header().Set("X-Aws-Ec2-Metadata-Token-Ttl-Seconds", r.Header.Get("X-Aws-Ec2-Metadata-Token-Ttl-Seconds"))
			w.Write([]byte(session))
			return
		}
		if r.Header.Get("X-Aws-Ec2-Metadata-Token") != session {
			c.note(r.Method+" "+r.URL.Path, "metadata request without the session token")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		c.note(r.Method+" "+r.URL.Path, "")
		switch r.URL.Path {
		case "/latest/meta-data/iam/security-credentials/":
			w.Write([]byte("stowage-role"))
		case "/latest/meta-data/iam/security-credentials/stowage-role":
			w.Write(credJSON(cred))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

// fakeContainerEndpoint answers the ECS/EKS container credentials
// endpoint, requiring the authorization token when one is given.
func fakeContainerEndpoint(t *testing.T, cred s3test.Credential, authToken string) (*httptest.Server, *calls) {
	c := &calls{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if authToken != "" && r.Header.Get("Authorization") != authToken {
			c.note(r.URL.Path, "request without the authorization token")
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		c.note(r.Method+" "+r.URL.Path, "")
		w.Header().Set("Content-Type", "application/json")
		w.Write(credJSON(cred))
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

// fakeSTS answers AssumeRoleWithWebIdentity for role with the web
// identity token jwt, as STS's query protocol does.
func fakeSTS(t *testing.T, cred s3test.Credential, role, jwt string) (*httptest.Server, *calls) {
	c := &calls{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			c.note("", "unparsable form")
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		f := r.PostForm
		var bad []string
		if f.Get("Action") != "AssumeRoleWithWebIdentity" {
			bad = append(bad, "action "+f.Get("Action"))
		}
		if f.Get("RoleArn") != role {
			bad = append(bad, "role "+f.Get("RoleArn"))
		}
		if f.Get("WebIdentityToken") != jwt {
			bad = append(bad, "wrong web identity token")
		}
		if r.Header.Get("Authorization") != "" {
			bad = append(bad, "AssumeRoleWithWebIdentity was signed")
		}
		c.note("AssumeRoleWithWebIdentity session="+f.Get("RoleSessionName"), strings.Join(bad, ", "))
		if len(bad) > 0 {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `<ErrorResponse><Error><Type>Sender</Type><Code>InvalidIdentityToken</Code><Message>refused</Message></Error></ErrorResponse>`)
			return
		}
		w.Header().Set("Content-Type", "text/xml")
		fmt.Fprintf(w, `<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <Credentials>
      <AccessKeyId>%s</AccessKeyId>
      <SecretAccessKey>%s</SecretAccessKey>
      <SessionToken>%s</SessionToken>
      <Expiration>%s</Expiration>
    </Credentials>
    <SubjectFromWebIdentityToken>system:serviceaccount:ns:stowage</SubjectFromWebIdentityToken>
    <AssumedRoleUser><Arn>%s/session</Arn><AssumedRoleId>AROAEXAMPLE:session</AssumedRoleId></AssumedRoleUser>
    <Audience>sts.amazonaws.com</Audience>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>`, cred.AccessKeyID, cred.SecretAccessKey, cred.SessionToken, time.Now().Add(time.Hour).UTC().Format(time.RFC3339), role)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

// writeWithProvider opens a bucket on an S3 server that accepts only
// want, with provider class and no static keys, and writes and reads one
// object: the server checks each request's SigV4 signature and session
// token against want.
func writeWithProvider(t *testing.T, provider string, want s3test.Credential) {
	t.Helper()
	srv := s3test.NewServer(t, want)
	p := props(t, srv, "fs.s3a.aws.credentials.provider", provider)
	delete(p, "fs.s3a.access.key")
	delete(p, "fs.s3a.secret.key")
	f, err := fsbackend.Open(context.Background(), p)
	if err != nil {
		t.Fatalf("Open with %s: %v", provider, err)
	}
	defer f.Close()
	ctx := context.Background()
	if err := fsbackend.WriteFile(ctx, f, "p/1", []byte("signed")); err != nil {
		t.Fatalf("write with %s: %v", provider, err)
	}
	if b, err := fsbackend.ReadFile(ctx, f, "p/1"); err != nil || string(b) != "signed" {
		t.Fatalf("read back %q, %v", b, err)
	}
	if ids := srv.KeyIDs(); len(ids) != 1 || ids[want.AccessKeyID] == 0 {
		t.Fatalf("server saw key ids %v, want only %s", ids, want.AccessKeyID)
	}
	if n := srv.Denied(); n != 0 {
		t.Fatalf("%d requests refused for their signature or token", n)
	}
}

// TestInstanceProfileProvider: the instance profile provider gets its
// credentials from IMDS (here a fake one on 127.0.0.1, named by
// AWS_EC2_METADATA_SERVICE_ENDPOINT) and signs with them, session token
// included.
func TestInstanceProfileProvider(t *testing.T) {
	for _, class := range []string{"com.amazonaws.auth.InstanceProfileCredentialsProvider", "org.apache.hadoop.fs.s3a.auth.IAMInstanceCredentialsProvider",
		"com.amazonaws.auth.EC2ContainerCredentialsProviderWrapper"} {
		t.Run(class, func(t *testing.T) {
			clearAWSEnv(t)
			imds, c := fakeIMDS(t, instanceCred)
			t.Setenv("AWS_EC2_METADATA_DISABLED", "false")
			t.Setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.URL)
			writeWithProvider(t, class, instanceCred)
			c.check(t, "PUT /latest/api/token", "GET /latest/meta-data/iam/security-credentials/stowage-role")
		})
	}
}

// TestContainerProvider: the container provider reads
// AWS_CONTAINER_CREDENTIALS_FULL_URI (a fake endpoint on 127.0.0.1) with
// the authorization token from the environment or a token file, and signs
// with the credentials it answers; the EC2 wrapper prefers it to IMDS.
func TestContainerProvider(t *testing.T) {
	const authToken = "container-auth-token-never-printed"
	for _, tc := range []struct {
		name, class string
		tokenFile   bool
	}{
		{"token", "com.amazonaws.auth.ContainerCredentialsProvider", false},
		{"token file", "software.amazon.awssdk.auth.credentials.ContainerCredentialsProvider", true},
		{"ec2 wrapper", "com.amazonaws.auth.EC2ContainerCredentialsProviderWrapper", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearAWSEnv(t)
			ep, c := fakeContainerEndpoint(t, containerCred, authToken)
			t.Setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", ep.URL+"/v2/credentials/task-1")
			if tc.tokenFile {
				path := filepath.Join(t.TempDir(), "token")
				os.WriteFile(path, []byte(authToken+"\n"), 0o600)
				t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", path)
			} else {
				t.Setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", authToken)
			}
			writeWithProvider(t, tc.class, containerCred)
			c.check(t, "GET /v2/credentials/task-1")
		})
	}
}

// TestWebIdentityProvider is the EKS IRSA case: the provider exchanges the
// token file's JWT for role credentials with AssumeRoleWithWebIdentity at
// the STS endpoint named by AWS_ENDPOINT_URL_STS (a fake on 127.0.0.1),
// and signs with them; the default chain does the same.
func TestWebIdentityProvider(t *testing.T) {
	const role = "arn:aws:iam::123456789012:role/stowage"
	const jwt = "eyJhbGciOiJSUzI1NiJ9.web-identity-jwt-never-printed.sig"
	for _, class := range []string{"com.amazonaws.auth.WebIdentityTokenCredentialsProvider", "com.amazonaws.auth.DefaultAWSCredentialsProviderChain"} {
		t.Run(class, func(t *testing.T) {
			clearAWSEnv(t)
			sts, c := fakeSTS(t, webIDCred, role, jwt)
			tok := filepath.Join(t.TempDir(), "token")
			os.WriteFile(tok, []byte(jwt), 0o600)
			t.Setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tok)
			t.Setenv("AWS_ROLE_ARN", role)
			t.Setenv("AWS_ROLE_SESSION_NAME", "stowage-test")
			t.Setenv("AWS_ENDPOINT_URL_STS", sts.URL)
			writeWithProvider(t, class, webIDCred)
			c.check(t, "AssumeRoleWithWebIdentity session=stowage-test")
		})
	}
}

// TestWrongSecretRefused: the test server checks signatures, so a wrong
// secret or a missing session token fails the write (403) without leaving
// an object, and the error holds no secret.
func TestWrongSecretRefused(t *testing.T) {
	const wrong = "wrong-secret-never-printed"
	for _, tc := range []struct {
		name     string
		kv       []string
		server   s3test.Credential
		wantCode string
	}{
		{"wrong secret", []string{"fs.s3a.secret.key", wrong}, s3test.Credential{AccessKeyID: testKeyID, SecretAccessKey: testSecret}, "SignatureDoesNotMatch"},
		{"unknown key id", []string{"fs.s3a.access.key", "AKIDUNKNOWN0000"}, s3test.Credential{AccessKeyID: testKeyID, SecretAccessKey: testSecret}, "InvalidAccessKeyId"},
		{"token missing", nil, s3test.Credential{AccessKeyID: testKeyID, SecretAccessKey: testSecret, SessionToken: envToken}, "InvalidToken"},
		{"token wrong", []string{"fs.s3a.session.token", "other-token"}, s3test.Credential{AccessKeyID: testKeyID, SecretAccessKey: testSecret, SessionToken: envToken}, "InvalidToken"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearAWSEnv(t)
			srv := s3test.NewServer(t, tc.server)
			f := open(t, props(t, srv, append(tc.kv, "fs.s3a.retry.limit", "0")...))
			err := fsbackend.WriteFile(context.Background(), f, "x", []byte("1"))
			if err == nil {
				t.Fatal("write succeeded")
			}
			if !strings.Contains(err.Error(), tc.wantCode) || !strings.Contains(err.Error(), "403") {
				t.Fatalf("err = %v, want a 403 %s", err, tc.wantCode)
			}
			if errors.Is(err, fs.ErrExist) || errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("refused request looks like a file state: %v", err)
			}
			// The values sent (the unknown key id, the other token) as well.
			shown := []string{wrong, testSecret, envToken, testKeyID}
			for i := 1; i < len(tc.kv); i += 2 {
				shown = append(shown, tc.kv[i])
			}
			for _, s := range shown {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("error shows %q: %v", s, err)
				}
			}
			if srv.Denied() == 0 {
				t.Fatal("server refused nothing")
			}
			// The right keys still work on the same server.
			good := open(t, props(t, srv, "fs.s3a.session.token", tc.server.SessionToken))
			if err := fsbackend.WriteFile(context.Background(), good, "y", []byte("1")); err != nil {
				t.Fatalf("write with the right keys: %v", err)
			}
		})
	}
}
