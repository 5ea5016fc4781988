// Package durable writes files so that a crash leaves either the old
// contents or the new, never a torn mix: written, synced, renamed into
// place, and the directory synced so that the rename survives.
//
// Owns: WriteFile, ReplaceFile, SyncDir.
// Does not own: what the files hold.
// May import: the standard library, pebble's vfs.
// Must not import: any other Sibyl package.
package durable
