package all

import (
	_ "github.com/stowage/stowage/fsbackend/cos"
	_ "github.com/stowage/stowage/fsbackend/gcs"
	_ "github.com/stowage/stowage/fsbackend/hdfs"
	_ "github.com/stowage/stowage/fsbackend/local"
	_ "github.com/stowage/stowage/fsbackend/oss"
	_ "github.com/stowage/stowage/fsbackend/s3"
)
