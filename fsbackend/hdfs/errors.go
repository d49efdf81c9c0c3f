package hdfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"syscall"

	gohdfs "github.com/colinmarc/hdfs/v2"

	"github.com/stowage/stowage/fsbackend"
)

// Errors that say why an HDFS call failed, beside fs.ErrExist,
// fs.ErrNotExist and fs.ErrPermission. Each comes wrapped in an
// *fs.PathError that names the path, together with the cause.
var (
	// ErrNameNodeUnreachable: no NameNode could be reached, or none of the
	// configured ones is active. Operations retry this for a while
	// (dfs.client.failover.*) before returning it.
	ErrNameNodeUnreachable = errors.New("stowage/fsbackend/hdfs: namenode unreachable")
	// ErrSafeMode: the NameNode is in safe mode and refuses changes.
	ErrSafeMode = errors.New("stowage/fsbackend/hdfs: namenode is in safe mode")
	// ErrQuotaExceeded: a namespace (names) or disk space quota of a
	// directory on the path would be exceeded.
	ErrQuotaExceeded = errors.New("stowage/fsbackend/hdfs: quota exceeded")
	// ErrPermission: the NameNode denied access (AccessControlException).
	// It matches fs.ErrPermission.
	ErrPermission = fmt.Errorf("stowage/fsbackend/hdfs: %w", fs.ErrPermission)
)

const (
	excSafeMode      = "org.apache.hadoop.hdfs.server.namenode.SafeModeException"
	excNSQuota       = "org.apache.hadoop.hdfs.protocol.NSQuotaExceededException"
	excDSQuota       = "org.apache.hadoop.hdfs.protocol.DSQuotaExceededException"
	excTypeQuota     = "org.apache.hadoop.hdfs.protocol.QuotaByStorageTypeExceededException"
	excQuota         = "org.apache.hadoop.hdfs.protocol.QuotaExceededException"
	excAccessControl = "org.apache.hadoop.security.AccessControlException"
	excStandby       = "org.apache.hadoop.ipc.StandbyException"
	excRetriable     = "org.apache.hadoop.ipc.RetriableException"
	excNotFound      = "java.io.FileNotFoundException"
	excAlreadyExists = "org.apache.hadoop.fs.FileAlreadyExistsException"
)

// kindError is a classified error: the sentinel that says which, a short
// detail from the server, and the cause.
type kindError struct {
	kind   error
	detail string
	cause  error
	retry  bool // the NameNode said RetriableException: try again later
}

func (e *kindError) Error() string {
	if e.detail == "" {
		return e.kind.Error()
	}
	return e.kind.Error() + ": " + e.detail
}

func (e *kindError) Unwrap() []error { return []error{e.kind, e.cause} }

// remoteDetail is "ExceptionClass: first line of the message".
func remoteDetail(r gohdfs.Error) string {
	exc := r.Exception()
	if i := strings.LastIndexByte(exc, '.'); i >= 0 {
		exc = exc[i+1:]
	}
	msg, _, _ := strings.Cut(strings.TrimSpace(r.Message()), "\n")
	if len(msg) > 300 {
		msg = msg[:300] + "..."
	}
	if msg == "" {
		return exc
	}
	return exc + ": " + msg
}

// classify maps an error of the Go client to this package's errors, as an
// *fs.PathError for op on path.
func classify(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var already *fs.PathError
	if errors.As(err, &already) && isOurs(already.Err) {
		return err
	}
	kind, detail := kindOf(err)
	var e error = err
	if kind != nil {
		e = &kindError{kind: kind, detail: detail, cause: err, retry: isRetriableRemote(err)}
	} else if pe, ok := err.(*os.PathError); ok {
		e = pe.Err // the path is ours to name
	}
	return &fs.PathError{Op: op, Path: path, Err: e}
}

func isOurs(err error) bool {
	var k *kindError
	return errors.As(err, &k) || errors.Is(err, fsbackend.ErrClosed) || errors.Is(err, fsbackend.ErrUnsupported)
}

// kindOf says which of our errors err is, with a detail line.
func kindOf(err error) (error, string) {
	var remote gohdfs.Error
	if errors.As(err, &remote) {
		switch exc := remote.Exception(); {
		case exc == excSafeMode, strings.Contains(strings.ToLower(remote.Message()), "safe mode"):
			return ErrSafeMode, remoteDetail(remote)
		case exc == excNSQuota:
			return ErrQuotaExceeded, "namespace quota (names): " + remoteDetail(remote)
		case exc == excDSQuota, exc == excTypeQuota:
			return ErrQuotaExceeded, "disk space quota: " + remoteDetail(remote)
		case exc == excQuota:
			return ErrQuotaExceeded, remoteDetail(remote)
		case exc == excAccessControl:
			return ErrPermission, remoteDetail(remote)
		case exc == excStandby:
			return ErrNameNodeUnreachable, "no active namenode: " + remoteDetail(remote)
		case exc == excNotFound:
			return fs.ErrNotExist, remoteDetail(remote)
		case exc == excAlreadyExists:
			return fs.ErrExist, remoteDetail(remote)
		case exc == excRetriable:
			return ErrNameNodeUnreachable, "namenode not ready: " + remoteDetail(remote)
		}
		return nil, ""
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fs.ErrNotExist, ""
	case errors.Is(err, fs.ErrExist):
		return fs.ErrExist, ""
	case errors.Is(err, fs.ErrPermission):
		return ErrPermission, "access denied by the namenode"
	case isConnErr(err):
		return ErrNameNodeUnreachable, err.Error()
	}
	return nil, ""
}

// isConnErr reports errors of the NameNode connection itself: nothing
// answered, the connection broke, or a call timed out.
func isConnErr(err error) bool {
	if strings.Contains(err.Error(), "no available namenodes") {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	return errors.As(err, &oe) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// isRetriableRemote reports a RetriableException from the NameNode, which
// the Java client retries too (an HA NameNode that just became active and
// is still leaving safe mode answers with it).
func isRetriableRemote(err error) bool {
	var remote gohdfs.Error
	return errors.As(err, &remote) && remote.Exception() == excRetriable
}

// retriable reports whether a classified error may succeed when the call
// is repeated: no NameNode answered, or the NameNode asked for a retry.
func retriable(err error) bool {
	var k *kindError
	return unreachable(err) || (errors.As(err, &k) && k.retry)
}

// unreachable reports whether a classified error means no NameNode
// answered, so that the call may be retried on a fresh client.
func unreachable(err error) bool { return errors.Is(err, ErrNameNodeUnreachable) }
