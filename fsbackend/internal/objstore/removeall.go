package objstore

import (
	"context"
	"errors"

	"github.com/stowage/stowage/fsbackend"
)

// RemoveAll implements fsbackend.DirRemover: the objects below dir are
// listed a page at a time and each page is deleted in batched requests
// where the Driver is a BatchDeleter (up to 1,000 keys a request on S3
// and OSS), else one Delete a key. Each request is retried as the other
// calls are.
func (f *FS) RemoveAll(ctx context.Context, dir string) error {
	if f.closed.Load() {
		return fsbackend.ErrClosed
	}
	if err := fsbackend.ValidName(dir); err != nil {
		return err
	}
	prefix := f.root + dir + "/"
	bd, batched := f.d.(BatchDeleter)
	var errs []error
	for token := ""; ; {
		var page Page
		err := f.retry(ctx, "list", prefix, func(ctx context.Context, _ int) error {
			var err error
			page, err = f.d.List(ctx, prefix, token)
			return err
		})
		if err != nil {
			return f.fail("list", prefix, err)
		}
		keys := make([]string, 0, len(page.Objects))
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		if batched && bd.MaxBatch() > 1 {
			for len(keys) > 0 {
				n := min(len(keys), bd.MaxBatch())
				batch := keys[:n]
				keys = keys[n:]
				err := f.retry(ctx, "removeall", prefix, func(ctx context.Context, _ int) error {
					return bd.DeleteBatch(ctx, batch)
				})
				if err != nil && f.d.Classify(err) != Missing {
					errs = append(errs, f.fail("removeall", prefix, err))
				}
			}
		} else {
			for _, k := range keys {
				if err := f.delete(ctx, "removeall", k); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		if token = page.Next; token == "" {
			break
		}
	}
	return nil
}

var _ fsbackend.DirRemover = (*FS)(nil)
