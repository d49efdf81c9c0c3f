package fsbackend

import (
	"errors"
	"fmt"
	"io/fs"
	"strconv"
)

// KeyUmask is the property (Hadoop's spelling) that decides the
// permissions of the files and directories the local and HDFS back ends
// create: a file gets 0666 and a directory 0777 with these bits cleared.
// stowage's default is DefaultUmask (owner only: 0600 files, 0700
// directories), stricter than Hadoop's 022; set "022" for files other
// users of the host may read.
const KeyUmask = "fs.permissions.umask-mode"

// DefaultUmask leaves files and directories to their owner alone.
const DefaultUmask fs.FileMode = 0o077

// ErrOutsideNamespace is matched by the error of an operation whose path
// leads, through a symbolic link, out of the namespace the FS was opened
// for (local disk).
var ErrOutsideNamespace = errors.New("stowage/fsbackend: a symbolic link leads out of the namespace")

// Umask returns KeyUmask of p, DefaultUmask when unset. The value is an
// octal number of at most four digits such as 077 or 0022.
func Umask(p Properties) (fs.FileMode, error) {
	v := p.Get(KeyUmask, "")
	if v == "" {
		return DefaultUmask, nil
	}
	u, err := strconv.ParseUint(v, 8, 32)
	if err != nil || len(v) > 4 || u > 0o777 {
		return 0, fmt.Errorf("stowage/fsbackend: key %s: %q is not an octal umask such as 077 or 022", KeyUmask, v)
	}
	return fs.FileMode(u), nil
}

// FileMode and DirMode are the permissions a umask leaves to new files
// and directories.
func FileMode(umask fs.FileMode) fs.FileMode { return 0o666 &^ umask }

// DirMode is FileMode for directories.
func DirMode(umask fs.FileMode) fs.FileMode { return 0o777 &^ umask }
