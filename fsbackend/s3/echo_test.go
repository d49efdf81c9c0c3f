package s3_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stowage/stowage/fsbackend"
)

// TestEchoedCredentialsScrubbed: a server that quotes the caller's key id
// and session token back in its error messages (as some S3-compatible
// servers do in AccessDenied and SignatureDoesNotMatch answers) gets
// neither into an error or a log line.
func TestEchoedCredentialsScrubbed(t *testing.T) {
	clearAWSEnv(t)
	const token = "session-token-echoed-by-the-server"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth := r.Header.Get("Authorization")
		tok := r.Header.Get("X-Amz-Security-Token")
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>denied for %s with token %s and secret %s</Message><AWSAccessKeyId>%s</AWSAccessKeyId><RequestId>1</RequestId></Error>`,
			auth, tok, testSecret, testKeyID)
	}))
	defer srv.Close()

	var logBuf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	defer slog.SetDefault(old)

	ctx := context.Background()
	f := open(t, fsbackend.Properties{
		"storage.type":                    "s3",
		"s3.bucket":                       "s3a://echo/root",
		"fs.s3a.endpoint":                 srv.URL,
		"fs.s3a.path.style.access":        "true",
		"fs.s3a.access.key":               testKeyID,
		"fs.s3a.secret.key":               testSecret,
		"fs.s3a.session.token":            token,
		"fs.s3a.retry.limit":              "1",
		"fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
	})
	var msgs []string
	if _, err := f.Open(ctx, "x"); err != nil {
		msgs = append(msgs, err.Error())
	}
	if _, err := f.List(ctx, "d"); err != nil {
		msgs = append(msgs, err.Error())
	}
	if err := fsbackend.WriteFile(ctx, f, "y", []byte("v")); err != nil {
		msgs = append(msgs, err.Error())
	}
	if len(msgs) != 3 {
		t.Fatalf("want 3 errors from a server that denies everything, got %q", msgs)
	}
	all := strings.Join(msgs, "\n")
	if !strings.Contains(all, "denied for") {
		t.Fatalf("the server's message is not in the errors (the test would prove nothing): %s", all)
	}
	all += "\n" + logBuf.String()
	for _, secret := range []string{testKeyID, testSecret, token} {
		if strings.Contains(all, secret) {
			t.Errorf("%q appears in an error or log line:\n%s", secret, all)
		}
	}
}
