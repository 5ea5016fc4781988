// Package tlsconf makes the TLS of a node's listeners and of the tools'
// connections from cassandra.yaml's encryption options.
//
// Owns: the encryption options (client_encryption_options and their kin)
// read and checked, with the setting named in every refusal; the
// tls.Config of a server, whose certificate and trusted authorities are
// read again when their files change (Cassandra 4.1's hot reloading); a
// listener that completes each handshake before handing a connection on,
// counts the handshakes refused, and with optional set takes plaintext on
// the same port; and the tls.Config of a client.
// Does not own: what runs over the connections (cql/native, messaging,
// node's admin API), nor where the settings come from (node's Config).
// May import: the standard library.
// Must not import: any package of the project.
//
// Concurrency: a Server is safe for concurrent use; its configuration is
// swapped whole when the files change.
package tlsconf
