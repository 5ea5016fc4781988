// Package auth owns who may connect and what each role may do: the
// roles, their passwords (bcrypt hashes), the roles granted to them and
// the permissions granted on resources, as the system_auth tables hold
// them, and the mutations a role or permission statement writes there.
//
// Every node holds all of system_auth: a change commits through the
// cluster metadata log, as a schema change does, and applies on every
// node, which then reloads its Roles. Authentication and authorization
// therefore read only local memory, and a REVOKE holds on every node once
// the log has applied it there, with no cache to expire.
//
// Owns: resources and permissions (names, parents, what each resource
// takes), reading system_auth into Roles (roles, grants, the roles each
// holds, superuser status), the system_auth mutations of the role and
// permission statements, password hashes and the credentials cache, and
// the configured authenticator and authorizer.
// Does not own: the statements' syntax (cql) or their checks and messages
// (cql/exec), the SASL exchange on the wire (cql/native), the system_auth
// table definitions (schema), committing changes (node, metadata).
// May import: schema, mutation, cqltype.
// Must not import: storage, cql, cql/exec, cql/native, coordinator, node.
//
// Concurrency: a Roles is immutable once loaded (what it derives is
// computed under a lock); a Service swaps them whole and guards its
// credentials cache.
package auth
