// Package all registers every storage back end built into stowage; import
// it for its side effect:
//
//	import _ "github.com/stowage/stowage/fsbackend/all"
package all
