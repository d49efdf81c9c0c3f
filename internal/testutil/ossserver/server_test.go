package ossserver_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	alioss "github.com/aliyun/aliyun-oss-go-sdk/oss"
	"go.uber.org/goleak"

	"github.com/stowage/stowage/internal/testutil/ossserver"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	testID     = "LTAItestid"
	testSecret = "test-secret-0123456789"
	bucketName = "bkt"
)

// setup starts a server and an SDK bucket handle with the given secret.
func setup(t *testing.T, secret string, copts ...alioss.ClientOption) (*ossserver.Server, *alioss.Bucket) {
	t.Helper()
	srv := ossserver.New(ossserver.Options{
		Credentials: []ossserver.Credential{{AccessKeyID: testID, AccessKeySecret: testSecret}},
		Buckets:     []string{bucketName},
	})
	tr := &http.Transport{}
	t.Cleanup(func() { tr.CloseIdleConnections(); srv.Close() })
	copts = append(copts, alioss.HTTPClient(&http.Client{Transport: tr}))
	c, err := alioss.New(srv.Endpoint(), testID, secret, copts...)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Bucket(bucketName)
	if err != nil {
		t.Fatal(err)
	}
	return srv, b
}

func serviceCode(err error) (int, string) {
	var se alioss.ServiceError
	if errors.As(err, &se) {
		return se.StatusCode, se.Code
	}
	return 0, ""
}

func TestSignature(t *testing.T) {
	tests := []struct {
		name   string
		id     string
		secret string
		code   string
	}{
		{"right secret", testID, testSecret, ""},
		{"wrong secret", testID, "not-the-secret", "SignatureDoesNotMatch"},
		{"unknown id", "LTAIother", testSecret, "InvalidAccessKeyId"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := setup(t, testSecret)
			tr := &http.Transport{}
			defer tr.CloseIdleConnections()
			c, err := alioss.New(srv.Endpoint(), tc.id, tc.secret, alioss.HTTPClient(&http.Client{Transport: tr}))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := c.Bucket(bucketName)
			for _, op := range []func() error{
				func() error { return b.PutObject("a/b c+d", strings.NewReader("x")) },
				func() error { _, err := b.GetObjectMeta("a/b c+d"); return err },
				func() error { _, err := b.ListObjectsV2(alioss.Prefix("a/")); return err },
				func() error { _, err := b.AppendObject("app", strings.NewReader("x"), 0); return err },
			} {
				err := op()
				st, code := serviceCode(err)
				if tc.code == "" && err != nil {
					t.Fatalf("want success, got %v", err)
				}
				if tc.code != "" && (st != http.StatusForbidden || code != tc.code) {
					t.Fatalf("want 403 %s, got %v", tc.code, err)
				}
				if err != nil && strings.Contains(err.Error(), tc.secret) {
					t.Fatalf("error shows the secret: %v", err)
				}
			}
		})
	}
}

func TestSecurityToken(t *testing.T) {
	srv := ossserver.New(ossserver.Options{
		Credentials: []ossserver.Credential{{AccessKeyID: testID, AccessKeySecret: testSecret, SecurityToken: "tok"}},
		Buckets:     []string{bucketName},
	})
	defer srv.Close()
	for _, tc := range []struct{ token, code string }{{"tok", ""}, {"other", "InvalidSecurityToken"}, {"", "InvalidSecurityToken"}} {
		tr := &http.Transport{}
		c, _ := alioss.New(srv.Endpoint(), testID, testSecret, alioss.SecurityToken(tc.token), alioss.HTTPClient(&http.Client{Transport: tr}))
		b, _ := c.Bucket(bucketName)
		err := b.PutObject("k", strings.NewReader("v"))
		tr.CloseIdleConnections()
		if _, code := serviceCode(err); code != tc.code {
			t.Errorf("token %q: want code %q, got %v", tc.token, tc.code, err)
		}
	}
}

func TestForbidOverwrite(t *testing.T) {
	srv, b := setup(t, testSecret)
	if err := b.PutObject("k", strings.NewReader("one"), alioss.ForbidOverWrite(true)); err != nil {
		t.Fatal(err)
	}
	err := b.PutObject("k", strings.NewReader("two"), alioss.ForbidOverWrite(true))
	if st, code := serviceCode(err); st != http.StatusConflict || code != "FileAlreadyExists" {
		t.Fatalf("want 409 FileAlreadyExists, got %v", err)
	}
	if got, _ := srv.Object(bucketName, "k"); string(got) != "one" {
		t.Fatalf("object overwritten: %q", got)
	}
	if err := b.PutObject("k", strings.NewReader("three")); err != nil {
		t.Fatalf("plain put must overwrite: %v", err)
	}
	if got, _ := srv.Object(bucketName, "k"); string(got) != "three" {
		t.Fatalf("got %q", got)
	}
	if _, err := b.CopyObject("k", "k2", alioss.ForbidOverWrite(true)); err != nil {
		t.Fatal(err)
	}
	_, err = b.CopyObject("k", "k2", alioss.ForbidOverWrite(true))
	if _, code := serviceCode(err); code != "FileAlreadyExists" {
		t.Fatalf("copy over existing with forbid-overwrite: %v", err)
	}
}

func TestAppendPositions(t *testing.T) {
	_, b := setup(t, testSecret)
	next, err := b.AppendObject("log", strings.NewReader("hello"), 0)
	if err != nil || next != 5 {
		t.Fatalf("first append: next %d, %v", next, err)
	}
	var hdr http.Header
	_, err = b.AppendObject("log", strings.NewReader("X"), 2, alioss.GetResponseHeader(&hdr))
	if st, code := serviceCode(err); st != http.StatusConflict || code != "PositionNotEqualToLength" {
		t.Fatalf("want 409 PositionNotEqualToLength, got %v", err)
	}
	if hdr.Get("X-Oss-Next-Append-Position") != "5" {
		t.Fatalf("next position header %q", hdr.Get("X-Oss-Next-Append-Position"))
	}
	next, err = b.AppendObject("log", strings.NewReader(" world"), 5)
	if err != nil || next != 11 {
		t.Fatalf("second append: next %d, %v", next, err)
	}
	body, err := b.GetObject("log")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(body)
	body.Close()
	if string(got) != "hello world" {
		t.Fatalf("got %q", got)
	}
	if err := b.PutObject("normal", strings.NewReader("n")); err != nil {
		t.Fatal(err)
	}
	_, err = b.AppendObject("normal", strings.NewReader("x"), 1)
	if _, code := serviceCode(err); code != "ObjectNotAppendable" {
		t.Fatalf("append to normal object: %v", err)
	}
}

func TestRangeAndIfMatch(t *testing.T) {
	_, b := setup(t, testSecret)
	if err := b.PutObject("r", strings.NewReader("0123456789")); err != nil {
		t.Fatal(err)
	}
	meta, err := b.GetObjectMeta("r")
	if err != nil || meta.Get("Content-Length") != "10" {
		t.Fatalf("meta %v %v", meta, err)
	}
	for _, tc := range []struct {
		start, end int64
		want       string
	}{{0, 0, "0"}, {3, 6, "3456"}, {8, 20, "89"}} {
		body, err := b.GetObject("r", alioss.Range(tc.start, tc.end), alioss.IfMatch(meta.Get("ETag")))
		if err != nil {
			t.Fatal(err)
		}
		got, _ := io.ReadAll(body)
		body.Close()
		if string(got) != tc.want {
			t.Errorf("range %d-%d: got %q want %q", tc.start, tc.end, got, tc.want)
		}
	}
	_, err = b.GetObject("r", alioss.Range(10, 12))
	if st, _ := serviceCode(err); st != http.StatusRequestedRangeNotSatisfiable {
		t.Fatalf("range past end: %v", err)
	}
	_, err = b.GetObject("r", alioss.IfMatch(`"0000"`))
	if st, _ := serviceCode(err); st != http.StatusPreconditionFailed {
		t.Fatalf("if-match mismatch: %v", err)
	}
	_, err = b.GetObjectMeta("missing")
	if st, _ := serviceCode(err); st != http.StatusNotFound {
		t.Fatalf("head missing: %v", err)
	}
	_, err = b.GetObject("missing")
	if st, code := serviceCode(err); st != http.StatusNotFound || code != "NoSuchKey" {
		t.Fatalf("get missing: %v", err)
	}
}

func TestListV2(t *testing.T) {
	_, b := setup(t, testSecret)
	keys := []string{"d/a", "d/b c", "d/sub/x", "d/sub/y", "d/z+", "e/1"}
	for _, k := range keys {
		if err := b.PutObject(k, strings.NewReader(k)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	tok, pages := "", 0
	for {
		opts := []alioss.Option{alioss.Prefix("d/"), alioss.MaxKeys(2)}
		if tok != "" {
			opts = append(opts, alioss.ContinuationToken(tok))
		}
		res, err := b.ListObjectsV2(opts...)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, o := range res.Objects {
			got = append(got, o.Key)
			if o.Size != int64(len(o.Key)) {
				t.Errorf("%s: size %d", o.Key, o.Size)
			}
		}
		if !res.IsTruncated {
			break
		}
		tok = res.NextContinuationToken
	}
	if want := "d/a,d/b c,d/sub/x,d/sub/y,d/z+"; strings.Join(got, ",") != want || pages != 3 {
		t.Fatalf("got %v in %d pages, want %s in 3", got, pages, want)
	}
	res, err := b.ListObjectsV2(alioss.Prefix("d/"), alioss.Delimiter("/"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Objects) != 3 || len(res.CommonPrefixes) != 1 || res.CommonPrefixes[0] != "d/sub/" {
		t.Fatalf("delimiter listing: %+v", res)
	}
}

func TestDeleteAndMultiDelete(t *testing.T) {
	srv, b := setup(t, testSecret)
	for i := range 5 {
		if err := b.PutObject(fmt.Sprintf("k%d", i), strings.NewReader("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.DeleteObject("k0"); err != nil {
		t.Fatal(err)
	}
	if err := b.DeleteObject("never-there"); err != nil {
		t.Fatalf("OSS deletes missing keys without error: %v", err)
	}
	res, err := b.DeleteObjects([]string{"k1", "k2", "nope"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.DeletedObjects) != 3 {
		t.Fatalf("deleted %v", res.DeletedObjects)
	}
	if got := strings.Join(srv.Keys(bucketName), ","); got != "k3,k4" {
		t.Fatalf("left %s", got)
	}
	if st := srv.Stats(); st.DeleteObjects != 3 {
		t.Fatalf("stats %+v", st)
	}
}

func TestFailNextAndStats(t *testing.T) {
	srv, b := setup(t, testSecret)
	srv.FailNext(2, 0)
	for i := range 2 {
		err := b.PutObject("k", bytes.NewReader([]byte("abc")))
		if st, code := serviceCode(err); st != http.StatusServiceUnavailable || code != "ServiceUnavailable" {
			t.Fatalf("request %d: want 503, got %v", i, err)
		}
	}
	if err := b.PutObject("k", bytes.NewReader([]byte("abc"))); err != nil {
		t.Fatalf("third request must pass: %v", err)
	}
	st := srv.Stats()
	if st.Faults != 2 || st.PutRequests != 1 || st.BytesStored != 3 || st.Requests != 3 {
		t.Fatalf("stats %+v", st)
	}
	srv.FailNext(-1, http.StatusInternalServerError)
	for range 3 {
		if _, err := b.GetObjectMeta("k"); err == nil {
			t.Fatal("want failure while failing forever")
		}
	}
	srv.Heal()
	if _, err := b.GetObjectMeta("k"); err != nil {
		t.Fatalf("after Heal: %v", err)
	}
}

func TestContentMD5Checked(t *testing.T) {
	_, b := setup(t, testSecret)
	err := b.PutObject("k", strings.NewReader("data"), alioss.ContentMD5("1B2M2Y8AsgTpgAmY7PhCfg=="))
	if _, code := serviceCode(err); code != "InvalidDigest" {
		t.Fatalf("want InvalidDigest, got %v", err)
	}
}
