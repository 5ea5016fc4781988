package node

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/sibyldb/sibyl/auth"
	"github.com/sibyldb/sibyl/cql/exec"
	"github.com/sibyldb/sibyl/cql/native"
	"github.com/sibyldb/sibyl/internal/tlsconf"
	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
)

// newAuth is the node's authentication and authorization, as configured.
func newAuth(cfg Config) *auth.Service {
	return auth.NewService(auth.Config{Authenticator: cfg.Authenticator, Authorizer: cfg.Authorizer,
		CredentialsValidity: time.Duration(*cfg.CredentialsValidity), CredentialsCacheSize: cfg.CredentialsCacheMaxEntries})
}

// loadRoles reads system_auth into the node's auth service. It runs at
// start-up and after each change of system_auth applies, before the
// schema epoch of the change is published: a statement checked against
// an epoch sees system_auth as of that epoch or later.
func (n *Node) loadRoles() error {
	roles, err := auth.LoadRoles(n.readRows)
	if err != nil {
		return err
	}
	n.auth.SetRoles(roles)
	return nil
}

// touchesAuth reports whether a change writes system_auth.
func touchesAuth(ms []*mutation.Mutation) bool {
	tables := schema.AuthTables()
	for _, m := range ms {
		if slices.ContainsFunc(tables, func(t *schema.Table) bool { return t.ID == m.Table }) {
			return true
		}
	}
	return false
}

// nativeAuthenticator is what the native server asks clients for: nothing
// with AllowAllAuthenticator, else a role and its password.
func (n *Node) nativeAuthenticator() native.Authenticator {
	if !n.auth.Authenticating() {
		return nil
	}
	return native.PasswordAuthenticator{Check: n.auth.Authenticate}
}

// newSession is a session of the node's clients, checked by its auth.
func (n *Node) newSession() *exec.Session {
	s := exec.NewSession(n)
	s.SetAuth(n.auth)
	return s
}

// setupDefaultSuperuser creates the default superuser (cassandra, with
// the password cassandra) once the cluster has no role at all, as
// Cassandra does superuser_setup_delay after a node starts: through the
// metadata log, so that of nodes doing it at once one creates it and the
// others find it. It gives up when the node stops.
func (n *Node) setupDefaultSuperuser() {
	delay := time.Duration(*n.cfg.SuperuserSetupDelay)
	for {
		select {
		case <-n.stopped:
			return
		case <-time.After(delay):
		}
		if len(n.auth.Roles().Names()) > 0 {
			return
		}
		base := n.Schema()
		now := time.Now()
		ms, err := n.auth.DefaultSuperuserMutations(&schema.CellWriter{Timestamp: now.UnixMicro(), Now: now.Unix()})
		if err == nil {
			err = n.ApplySchema(base, ms)
		}
		switch {
		case err == nil:
			n.cfg.Logger.Info().Msg("Created default superuser role 'cassandra'")
			return
		case errors.Is(err, exec.ErrSchemaChanged):
			delay = 0 // look again: the change that came first may have made it
		default:
			n.cfg.Logger.Warn().Err(err).Msg("auth: the default superuser could not be set up yet; trying again")
			delay = max(time.Duration(*n.cfg.SuperuserSetupDelay), time.Second)
		}
	}
}

// tlsServer is the TLS of one of the node's listeners (key names its
// settings, listener its metrics), made once and kept in *slot, so that a
// restarted listener keeps it and its counters. It logs its refused
// handshakes (without what the client sent) and its reloads.
func (n *Node) tlsServer(slot **tlsconf.Server, key, listener string, opts tlsconf.Options) (*tlsconf.Server, error) {
	if *slot != nil {
		return *slot, nil
	}
	t, err := tlsconf.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	t.OnHandshakeFailure = func(err *tlsconf.HandshakeError) {
		n.cfg.Logger.Warn().Str("listener", key).Str("client", err.Remote).Str("error", err.Err.Error()).Msg("tls: a handshake was refused")
	}
	t.OnReload = func(err error) {
		if err != nil {
			n.cfg.Logger.Error().Str("listener", key).Err(err).Msg("tls: the certificate files changed and do not load; the ones before stay in use")
			return
		}
		n.cfg.Logger.Info().Str("listener", key).Msg("tls: the certificate files changed; reloaded")
	}
	n.metrics.watchTLS(listener, t)
	*slot = t
	return t, nil
}

// Login checks a client's credentials as a connection's AUTH_RESPONSE
// does and returns a session that runs as that role; with
// AllowAllAuthenticator every client gets an anonymous session.
func (n *Node) Login(user, password string) (*exec.Session, error) {
	s := n.newSession()
	if !n.auth.Authenticating() {
		return s, nil
	}
	if err := n.auth.Authenticate(user, password); err != nil {
		return nil, err
	}
	s.SetUser(user)
	return s, nil
}
