package ossserver

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"net/http"
	"sort"
	"strings"
	"time"
)

// signedSubresources are the query parameters that OSS V1 puts into the
// canonical resource (the others, such as prefix or max-keys, are not
// signed). This covers the operations the server implements plus the
// response-* overrides.
var signedSubresources = map[string]bool{
	"acl": true, "append": true, "position": true, "delete": true, "objectMeta": true,
	"continuation-token": true, "uploadId": true, "partNumber": true, "uploads": true,
	"versionId": true, "versions": true, "tagging": true, "symlink": true, "restore": true,
	"security-token": true, "x-oss-process": true,
	"response-content-type": true, "response-content-language": true, "response-expires": true,
	"response-cache-control": true, "response-content-disposition": true, "response-content-encoding": true,
}

// maxSkew is how far the Date header may be from the server's clock.
const maxSkew = 15 * time.Minute

type authError struct{ code, msg string }

func (e *authError) Error() string { return e.code + ": " + e.msg }

// authenticate checks the request's V1 signature. The error messages name
// the access key id, never a secret: OSS's own answers quote it (in
// OSSAccessKeyId), so a client that must not show it has to remove it
// from its errors, and tests of that client see whether it does.
func (s *Server) authenticate(r *http.Request, bucket, key string) *authError {
	auth := r.Header.Get("Authorization")
	if auth == "" {
		return &authError{"AccessDenied", "anonymous access is not allowed by the test server"}
	}
	rest, ok := strings.CutPrefix(auth, "OSS ")
	if !ok {
		return &authError{"AccessDenied", "only OSS V1 signatures (Authorization: OSS id:signature) are checked by the test server"}
	}
	id, sig, ok := strings.Cut(rest, ":")
	if !ok {
		return &authError{"InvalidArgument", "malformed Authorization header"}
	}
	cred, known := s.creds[id]
	if !known {
		return &authError{"InvalidAccessKeyId", "the OSS access key id you provided does not exist: " + id}
	}
	date := r.Header.Get("Date")
	t, err := http.ParseTime(date)
	if err != nil {
		return &authError{"AccessDenied", "missing or malformed Date header"}
	}
	if d := time.Since(t); d > maxSkew || d < -maxSkew {
		return &authError{"RequestTimeTooSkewed", "the difference between the request time and the server's time is too large"}
	}
	want := sign(cred.AccessKeySecret, stringToSign(r, bucket, key))
	if !hmac.Equal([]byte(sig), []byte(want)) {
		return &authError{"SignatureDoesNotMatch", "the request signature we calculated does not match the signature you provided (access key id " + id + ")"}
	}
	if cred.SecurityToken != "" && r.Header.Get("x-oss-security-token") != cred.SecurityToken {
		return &authError{"InvalidSecurityToken", "the security token you provided is invalid"}
	}
	return nil
}

// stringToSign builds the OSS V1 string to sign:
//
//	VERB \n Content-MD5 \n Content-Type \n Date \n CanonicalizedOSSHeaders CanonicalizedResource
func stringToSign(r *http.Request, bucket, key string) string {
	var hdrs []string
	for k, v := range r.Header {
		lk := strings.ToLower(k)
		if strings.HasPrefix(lk, "x-oss-") && len(v) > 0 {
			hdrs = append(hdrs, lk+":"+v[0])
		}
	}
	sort.Strings(hdrs)
	var b strings.Builder
	b.WriteString(r.Method + "\n")
	b.WriteString(r.Header.Get("Content-MD5") + "\n")
	b.WriteString(r.Header.Get("Content-Type") + "\n")
	b.WriteString(r.Header.Get("Date") + "\n")
	for _, h := range hdrs {
		b.WriteString(h + "\n")
	}
	b.WriteString(canonicalResource(r, bucket, key))
	return b.String()
}

func canonicalResource(r *http.Request, bucket, key string) string {
	res := "/"
	if bucket != "" {
		res = "/" + bucket + "/" + key
	}
	q := r.URL.Query()
	var subs []string
	for k := range q {
		if signedSubresources[k] {
			subs = append(subs, k)
		}
	}
	if len(subs) == 0 {
		return res
	}
	sort.Strings(subs)
	for i, k := range subs {
		if v := q.Get(k); v != "" {
			subs[i] = k + "=" + v
		}
	}
	return res + "?" + strings.Join(subs, "&")
}

func sign(secret, s string) string {
	h := hmac.New(sha1.New, []byte(secret))
	h.Write([]byte(s))
	return base64.StdEncoding.EncodeToString(h.Sum(nil))
}
