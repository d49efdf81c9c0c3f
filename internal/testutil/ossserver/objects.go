package ossserver

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

const lastModifiedFormat = "2006-01-02T15:04:05.000Z"

// forbidOverwrite reports whether the request carries x-oss-forbid-overwrite: true.
func forbidOverwrite(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("x-oss-forbid-overwrite"), "true")
}

func (s *Server) setObjectHeaders(w http.ResponseWriter, o *object) {
	h := w.Header()
	h.Set("ETag", o.etag)
	h.Set("Last-Modified", o.modTime.Format(http.TimeFormat))
	h.Set("x-oss-hash-crc64ecma", strconv.FormatUint(o.crc, 10))
	if o.appendable {
		h.Set("x-oss-object-type", "Appendable")
		h.Set("x-oss-next-append-position", strconv.Itoa(len(o.data)))
	} else {
		h.Set("x-oss-object-type", "Normal")
	}
	if o.ctype != "" {
		h.Set("Content-Type", o.ctype)
	}
}

func (s *Server) putObject(w http.ResponseWriter, r *http.Request, bucket, key string) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "IncompleteBody", "reading the request body: "+err.Error())
		return
	}
	if want := r.Header.Get("Content-MD5"); want != "" {
		sum := md5.Sum(data)
		if base64.StdEncoding.EncodeToString(sum[:]) != want {
			s.fail(w, r, http.StatusBadRequest, "InvalidDigest", "the Content-MD5 you specified is not valid")
			return
		}
	}
	s.mu.Lock()
	b := s.buckets[bucket]
	if b == nil {
		s.mu.Unlock()
		s.fail(w, r, http.StatusNotFound, "NoSuchBucket", "the specified bucket does not exist")
		return
	}
	if _, exists := b[key]; exists && forbidOverwrite(r) {
		s.mu.Unlock()
		s.fail(w, r, http.StatusConflict, "FileAlreadyExists", "the object you specified already exists and can not be overwritten")
		return
	}
	o := newObject(data, false, r.Header.Get("Content-Type"))
	b[key] = o
	s.mu.Unlock()
	s.puts.Add(1)
	s.stored.Add(int64(len(data)))
	s.setObjectHeaders(w, o)
	w.Header().Del("Last-Modified")
	w.WriteHeader(http.StatusOK)
}

type copyResult struct {
	XMLName      xml.Name `xml:"CopyObjectResult"`
	LastModified string   `xml:"LastModified"`
	ETag         string   `xml:"ETag"`
}

func (s *Server) copyObject(w http.ResponseWriter, r *http.Request, bucket, key string) {
	src := strings.TrimPrefix(r.Header.Get("x-oss-copy-source"), "/")
	src, _, _ = strings.Cut(src, "?")
	srcBucket, srcKeyEsc, _ := strings.Cut(src, "/")
	srcKey, err := url.QueryUnescape(srcKeyEsc)
	if err != nil || srcKey == "" {
		s.fail(w, r, http.StatusBadRequest, "InvalidArgument", "malformed x-oss-copy-source")
		return
	}
	s.mu.Lock()
	sb, db := s.buckets[srcBucket], s.buckets[bucket]
	if sb == nil || db == nil {
		s.mu.Unlock()
		s.fail(w, r, http.StatusNotFound, "NoSuchBucket", "the specified bucket does not exist")
		return
	}
	so := sb[srcKey]
	if so == nil {
		s.mu.Unlock()
		s.fail(w, r, http.StatusNotFound, "NoSuchKey", "the specified source key does not exist")
		return
	}
	if _, exists := db[key]; exists && forbidOverwrite(r) {
		s.mu.Unlock()
		s.fail(w, r, http.StatusConflict, "FileAlreadyExists", "the object you specified already exists and can not be overwritten")
		return
	}
	o := newObject(append([]byte(nil), so.data...), false, so.ctype)
	db[key] = o
	s.mu.Unlock()
	s.copies.Add(1)
	w.Header().Set("x-oss-hash-crc64ecma", strconv.FormatUint(o.crc, 10))
	writeXML(w, copyResult{LastModified: o.modTime.Format(lastModifiedFormat), ETag: o.etag})
}

func (s *Server) appendObject(w http.ResponseWriter, r *http.Request, bucket, key string) {
	pos, err := strconv.ParseInt(r.URL.Query().Get("position"), 10, 64)
	if err != nil || pos < 0 {
		s.fail(w, r, http.StatusBadRequest, "InvalidArgument", "position must be a non-negative integer")
		return
	}
	data, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "IncompleteBody", "reading the request body: "+err.Error())
		return
	}
	s.mu.Lock()
	b := s.buckets[bucket]
	if b == nil {
		s.mu.Unlock()
		s.fail(w, r, http.StatusNotFound, "NoSuchBucket", "the specified bucket does not exist")
		return
	}
	o := b[key]
	var cur int64
	if o != nil {
		if !o.appendable {
			s.mu.Unlock()
			s.fail(w, r, http.StatusConflict, "ObjectNotAppendable", "the object is not appendable")
			return
		}
		cur = int64(len(o.data))
	}
	if pos != cur {
		s.mu.Unlock()
		w.Header().Set("x-oss-next-append-position", strconv.FormatInt(cur, 10))
		s.fail(w, r, http.StatusConflict, "PositionNotEqualToLength", "position is not equal to file length")
		return
	}
	var whole []byte
	ctype := r.Header.Get("Content-Type")
	if o != nil {
		whole = append(append([]byte(nil), o.data...), data...)
		ctype = o.ctype
	} else {
		whole = data
	}
	no := newObject(whole, true, ctype)
	b[key] = no
	s.mu.Unlock()
	s.puts.Add(1)
	s.stored.Add(int64(len(data)))
	s.setObjectHeaders(w, no)
	w.Header().Del("Last-Modified")
	w.WriteHeader(http.StatusOK)
}

func (s *Server) lookup(w http.ResponseWriter, r *http.Request, bucket, key string) *object {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.buckets[bucket]
	if b == nil {
		s.fail(w, r, http.StatusNotFound, "NoSuchBucket", "the specified bucket does not exist")
		return nil
	}
	o := b[key]
	if o == nil {
		s.fail(w, r, http.StatusNotFound, "NoSuchKey", "the specified key does not exist")
		return nil
	}
	return o // objects are replaced, never mutated, so it may be read unlocked
}

func (s *Server) getObject(w http.ResponseWriter, r *http.Request, bucket, key string, head bool) {
	o := s.lookup(w, r, bucket, key)
	if o == nil {
		return
	}
	if m := r.Header.Get("If-Match"); m != "" && m != o.etag && m != "*" {
		s.fail(w, r, http.StatusPreconditionFailed, "PreconditionFailed", "If-Match: the object's ETag does not match")
		return
	}
	s.setObjectHeaders(w, o)
	if head {
		w.Header().Set("Content-Length", strconv.Itoa(len(o.data)))
		w.WriteHeader(http.StatusOK)
		return
	}
	size := int64(len(o.data))
	start, end, ranged, ok := parseRange(r.Header.Get("Range"), size)
	if !ok {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		s.fail(w, r, http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "the requested range cannot be satisfied")
		return
	}
	status := http.StatusOK
	if ranged {
		status = http.StatusPartialContent
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", start, end, size))
		w.Header().Set("Accept-Ranges", "bytes")
	}
	body := o.data
	if ranged {
		body = o.data[start : end+1]
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// parseRange parses "bytes=a-b", "bytes=a-" and "bytes=-n". ok is false
// for a range that starts past the end of a non-empty object.
func parseRange(h string, size int64) (start, end int64, ranged, ok bool) {
	spec, found := strings.CutPrefix(h, "bytes=")
	if h == "" || !found || strings.Contains(spec, ",") {
		return 0, size - 1, false, true // no range, or one OSS would ignore
	}
	a, b, _ := strings.Cut(spec, "-")
	switch {
	case a == "":
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil {
			return 0, size - 1, false, true
		}
		start, end = max(size-n, 0), size-1
	default:
		var err error
		if start, err = strconv.ParseInt(a, 10, 64); err != nil {
			return 0, size - 1, false, true
		}
		end = size - 1
		if b != "" {
			if end, err = strconv.ParseInt(b, 10, 64); err != nil || end < start {
				return 0, size - 1, false, true
			}
			end = min(end, size-1)
		}
	}
	if start >= size {
		return 0, 0, true, false
	}
	return start, end, true, true
}

func (s *Server) deleteObject(w http.ResponseWriter, r *http.Request, bucket, key string) {
	s.mu.Lock()
	b := s.buckets[bucket]
	if b == nil {
		s.mu.Unlock()
		s.fail(w, r, http.StatusNotFound, "NoSuchBucket", "the specified bucket does not exist")
		return
	}
	if _, ok := b[key]; ok {
		delete(b, key)
		s.deletes.Add(1)
	}
	s.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

type deleteRequest struct {
	XMLName xml.Name `xml:"Delete"`
	Quiet   bool     `xml:"Quiet"`
	Objects []struct {
		Key string `xml:"Key"`
	} `xml:"Object"`
}

type deleteResult struct {
	XMLName      xml.Name `xml:"DeleteResult"`
	EncodingType string   `xml:"EncodingType,omitempty"`
	Deleted      []struct {
		Key string `xml:"Key"`
	} `xml:"Deleted"`
}

func (s *Server) deleteMultiple(w http.ResponseWriter, r *http.Request, bucket string) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, r, http.StatusBadRequest, "IncompleteBody", "reading the request body: "+err.Error())
		return
	}
	sum := md5.Sum(body)
	if r.Header.Get("Content-MD5") != base64.StdEncoding.EncodeToString(sum[:]) {
		s.fail(w, r, http.StatusBadRequest, "InvalidDigest", "DeleteMultipleObjects needs a valid Content-MD5")
		return
	}
	var req deleteRequest
	if err := xml.Unmarshal(body, &req); err != nil {
		s.fail(w, r, http.StatusBadRequest, "MalformedXML", "the XML you provided was not well-formed")
		return
	}
	if len(req.Objects) > 1000 {
		s.fail(w, r, http.StatusBadRequest, "MalformedXML", "at most 1000 objects may be deleted at once")
		return
	}
	encode := r.URL.Query().Get("encoding-type") == "url"
	var out deleteResult
	if encode {
		out.EncodingType = "url"
	}
	s.mu.Lock()
	b := s.buckets[bucket]
	if b == nil {
		s.mu.Unlock()
		s.fail(w, r, http.StatusNotFound, "NoSuchBucket", "the specified bucket does not exist")
		return
	}
	for _, o := range req.Objects {
		if _, ok := b[o.Key]; ok {
			delete(b, o.Key)
			s.deletes.Add(1)
		}
		if !req.Quiet {
			k := o.Key
			if encode {
				k = url.QueryEscape(k)
			}
			out.Deleted = append(out.Deleted, struct {
				Key string `xml:"Key"`
			}{k})
		}
	}
	s.mu.Unlock()
	writeXML(w, out)
}

type listContent struct {
	Key          string `xml:"Key"`
	LastModified string `xml:"LastModified"`
	ETag         string `xml:"ETag"`
	Type         string `xml:"Type"`
	Size         int64  `xml:"Size"`
	StorageClass string `xml:"StorageClass"`
}

type listResult struct {
	XMLName               xml.Name      `xml:"ListBucketResult"`
	Name                  string        `xml:"Name"`
	Prefix                string        `xml:"Prefix"`
	StartAfter            string        `xml:"StartAfter,omitempty"`
	ContinuationToken     string        `xml:"ContinuationToken,omitempty"`
	MaxKeys               int           `xml:"MaxKeys"`
	Delimiter             string        `xml:"Delimiter,omitempty"`
	EncodingType          string        `xml:"EncodingType,omitempty"`
	IsTruncated           bool          `xml:"IsTruncated"`
	NextContinuationToken string        `xml:"NextContinuationToken,omitempty"`
	KeyCount              int           `xml:"KeyCount"`
	Contents              []listContent `xml:"Contents"`
	CommonPrefixes        []struct {
		Prefix string `xml:"Prefix"`
	} `xml:"CommonPrefixes"`
}

func (s *Server) listV2(w http.ResponseWriter, r *http.Request, bucket string) {
	q := r.URL.Query()
	if q.Get("list-type") != "2" {
		s.fail(w, r, http.StatusNotImplemented, "NotImplemented", "only ListObjectsV2 (list-type=2) is implemented by the test server")
		return
	}
	prefix, delim, startAfter := q.Get("prefix"), q.Get("delimiter"), q.Get("start-after")
	maxKeys := 100
	if v := q.Get("max-keys"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			s.fail(w, r, http.StatusBadRequest, "InvalidArgument", "max-keys must be between 1 and 1000")
			return
		}
		maxKeys = n
	}
	after := startAfter
	if tok := q.Get("continuation-token"); tok != "" {
		k, err := base64.RawURLEncoding.DecodeString(tok)
		if err != nil {
			s.fail(w, r, http.StatusBadRequest, "InvalidArgument", "malformed continuation-token")
			return
		}
		after = string(k)
	}
	s.mu.Lock()
	b := s.buckets[bucket]
	if b == nil {
		s.mu.Unlock()
		s.fail(w, r, http.StatusNotFound, "NoSuchBucket", "the specified bucket does not exist")
		return
	}
	keys := make([]string, 0, len(b))
	for k := range b {
		if strings.HasPrefix(k, prefix) && k > after {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	enc := func(v string) string { return v }
	out := listResult{Name: bucket, MaxKeys: maxKeys, ContinuationToken: q.Get("continuation-token")}
	if q.Get("encoding-type") == "url" {
		enc = url.QueryEscape
		out.EncodingType = "url"
	}
	out.Prefix, out.Delimiter, out.StartAfter = enc(prefix), enc(delim), enc(startAfter)
	seenPrefix := map[string]bool{}
	n, last := 0, ""
	for _, k := range keys {
		cp := ""
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				cp = k[:len(prefix)+i+len(delim)]
			}
		}
		if cp != "" && seenPrefix[cp] {
			last = k
			continue
		}
		if n == maxKeys {
			out.IsTruncated = true
			out.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(last))
			break
		}
		if cp != "" {
			seenPrefix[cp] = true
			out.CommonPrefixes = append(out.CommonPrefixes, struct {
				Prefix string `xml:"Prefix"`
			}{enc(cp)})
			last = k
			n++
			continue
		}
		o := b[k]
		typ := "Normal"
		if o.appendable {
			typ = "Appendable"
		}
		out.Contents = append(out.Contents, listContent{
			Key: enc(k), LastModified: o.modTime.Format(lastModifiedFormat), ETag: o.etag,
			Type: typ, Size: int64(len(o.data)), StorageClass: "Standard",
		})
		last = k
		n++
	}
	s.mu.Unlock()
	out.KeyCount = n
	writeXML(w, out)
}
