// Package gcs is the fsbackend for Google Cloud Storage, on
// cloud.google.com/go/storage. Importing it registers the back end as
// storage.type "gcs". The client library is large, which is why this back
// end lives in its own package: programs that do not import it do not
// carry it.
//
// # What it guarantees
//
// Capabilities: DurableAppend false, AtomicRename false, ConditionalCreate
// true. A Writer buffers in memory and uploads on Close with the
// precondition DoesNotExist (ifGenerationMatch=0) and the data's CRC-32C,
// so the object appears whole or not at all, and a second writer of the
// same name fails with an error matching fs.ErrExist (HTTP 412). Create
// also looks the name up first, so an existing name is refused at once.
// Sync returns fsbackend.ErrUnsupported; Abort before Close sends nothing,
// after a failed Close it deletes what the upload may have stored when it
// holds exactly the writer's bytes (size and CRC-32C), never after the
// precondition failed (the object is another writer's), and after a
// successful Close it does nothing. A Writer's Close uses the context given
// to Create. This package is the GCS driver, credentials and properties;
// the file-system layer (names, errors, writer and pinned reader) and the
// gcs.bucket parsing are objstore's, shared with the s3, cos and oss back
// ends; the retries are not (see below).
//
// Open reads the object's attributes once and pins its generation: every
// ReadAt is a range read of that generation, so a replaced object is an
// error, never a mix of two versions. List pages through every object
// below the directory's prefix (directory placeholders ending in "/" are
// skipped) and sorts by name. Remove looks the object up, then deletes it;
// a missing object matches fs.ErrNotExist.
//
// Rename looks the source up, then copies and deletes (not atomic). With
// fs.gs.operation.move.enable: true it uses the object move API instead,
// which real GCS has (on buckets with hierarchical namespace) but
// fake-gcs-server does not. Unlike the Hadoop connector, whose default is
// the move API, the default here is copy then delete, which works
// everywhere.
//
// Retries are the client library's (idempotent operations, conditional
// uploads included, on 429, 5xx and network errors), not objstore's loop
// around whole requests, with backoff from RetryPolicy; every operation is
// bounded by RetryPolicy.Deadline (default 2 minutes) and by the context.
// A retried upload whose first attempt did store the object but lost the
// answer reports fs.ErrExist.
//
// # Properties
//
//	storage.type: gcs
//	gcs.bucket: gs://bucket[/prefix]                      required
//	fs.gs.project.id: my-project                          the billed project with requester pays, else unused
//	fs.gs.requester.pays.mode: DISABLED                   ENABLED: every request bills the project (userProject)
//	fs.gs.requester.pays.project.id: other-project        the project billed, if not fs.gs.project.id
//	fs.gs.auth.service.account.json.keyfile: /path/key.json   a service account (or other JSON credentials) file
//	fs.gs.operation.move.enable: false                    Rename by the move API when true
//	fs.gs.storage.root.url: http://127.0.0.1:4443/        another endpoint, such as an emulator
//	fs.gs.auth.type: UNAUTHENTICATED                      no credentials (emulators)
//	disable.cache: false                                  share clients between FS values
//
// The Hadoop connector needs fs.gs.project.id only to list and create
// buckets, which stowage never does: the key is accepted, and used as the
// project billed for requests to requester-pays buckets when
// fs.gs.requester.pays.mode is ENABLED (AUTO and CUSTOM are refused).
//
// Without a key file the client uses Application Default Credentials:
// GOOGLE_APPLICATION_CREDENTIALS, gcloud's ADC file, or the metadata server
// (workload identity on GKE, a VM's service account). When none of these
// gives credentials, opening the FS fails with an error that matches
// ErrNoCredentials and says what to set. When the environment
// variable STORAGE_EMULATOR_HOST is set (host:port, or a URL) the client
// talks to that emulator without authentication; this and
// fs.gs.storage.root.url both switch reads to the JSON API, which
// emulators serve more reliably than the XML API. Other fs.gs.* keys are
// accepted and ignored. Errors name keys and paths, never the contents of
// a key file.
//
// Clients are cached (github.com/hashicorp/golang-lru/v2, reference
// counted so that a client still in use is closed only when its last FS
// closes) unless disable.cache is true.
package gcs
