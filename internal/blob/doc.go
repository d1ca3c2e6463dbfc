// Package blob is gateflow's blob store and the claim-check codec built on it.
//
// A Store keeps byte blobs by key in a gocloud.dev/blob bucket opened from a URL:
//
//	file:///var/lib/gateflow/blobs          a directory (created on first use)
//	s3://bucket?region=eu-west-1            Amazon S3 or an S3-protocol server (endpoint=, use_path_style=true)
//	gs://bucket                             Google Cloud Storage
//	azblob://container                      Azure Blob Storage
//
// Codec is a Temporal converter.PayloadCodec that moves every payload bigger than a
// threshold (DefaultThreshold, 128 KiB) into the store under the key of its SHA-256 and
// leaves a small reference payload in the workflow history (encoding EncodingRef, with
// the key, size and hash in its metadata). Decode fetches the blob back and checks its
// hash. Every client and worker of a namespace that reads such payloads needs a codec on
// the same store; HTTPHandler serves it to the Temporal Web UI as a codec server.
package blob
