// Package all registers every storage back end built into stowage; import
// it for its side effect:
//
//	import _ "github.com/stowage/stowage/fsbackend/all"
package all

import (
	_ "github.com/stowage/stowage/fsbackend/gcs"
	_ "github.com/stowage/stowage/fsbackend/hdfs"
	_ "github.com/stowage/stowage/fsbackend/local"
	_ "github.com/stowage/stowage/fsbackend/oss"
)
