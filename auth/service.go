package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sibyldb/sibyl/mutation"
	"github.com/sibyldb/sibyl/schema"
	"golang.org/x/crypto/bcrypt"
)

// The authenticators, authorizers and role manager, by the class names
// cassandra.yaml gives them (the short name or the full one).
const (
	AllowAllAuthenticator = "AllowAllAuthenticator"
	PasswordAuthenticator = "PasswordAuthenticator"
	AllowAllAuthorizer    = "AllowAllAuthorizer"
	CassandraAuthorizer   = "CassandraAuthorizer"
	CassandraRoleManager  = "CassandraRoleManager"
)

// DefaultSuperuser is the role a new cluster with PasswordAuthenticator
// starts with, and its password.
const (
	DefaultSuperuser         = "cassandra"
	DefaultSuperuserPassword = "cassandra"
)

// Config is how a node authenticates and authorizes.
type Config struct {
	Authenticator string // AllowAllAuthenticator or PasswordAuthenticator
	Authorizer    string // AllowAllAuthorizer or CassandraAuthorizer
	// CredentialsValidity is how long a login checked against a role's
	// hash is taken again without bcrypt (credentials_validity); 0 checks
	// every login.
	CredentialsValidity time.Duration
	// CredentialsCacheSize bounds the logins kept (credentials_cache_max_entries).
	CredentialsCacheSize int
	// BcryptCost is the work factor of new hashes; default 10, Cassandra's.
	BcryptCost int
	// Now is the clock of the credentials cache; default time.Now.
	Now func() time.Time
}

// Service is a node's authentication and authorization: its
// configuration, system_auth as last applied here, and the credentials
// cache.
type Service struct {
	cfg   Config
	roles atomic.Pointer[Roles]
	// key keys the digests the credentials cache keeps of passwords: a
	// password is never kept, and a digest means nothing outside this
	// process.
	key [32]byte

	mu    sync.Mutex
	creds map[string]credential

	unknownOnce sync.Once
	unknown     []byte
	// hashChecks counts the logins checked with bcrypt (not the cache).
	hashChecks atomic.Int64

	// Failures counts the logins refused.
	Failures atomic.Int64
	// Refusals counts the statements refused for a missing permission.
	Refusals atomic.Int64
}

type credential struct {
	hash    string // the salted hash the password was checked against
	digest  [32]byte
	expires time.Time
}

// NewService returns a service with no roles loaded.
func NewService(cfg Config) *Service {
	if cfg.BcryptCost == 0 {
		cfg.BcryptCost = bcrypt.DefaultCost
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CredentialsCacheSize == 0 {
		cfg.CredentialsCacheSize = 1000
	}
	s := &Service{cfg: cfg, creds: map[string]credential{}}
	_, _ = rand.Read(s.key[:]) // never fails: crypto/rand fills it or stops the program
	s.roles.Store(NoRoles())
	return s
}

// Authenticating reports whether clients must log in.
func (s *Service) Authenticating() bool {
	return s != nil && s.cfg.Authenticator == PasswordAuthenticator
}

// Authorizing reports whether statements are checked against permissions.
func (s *Service) Authorizing() bool {
	return s != nil && s.cfg.Authorizer == CassandraAuthorizer
}

// Roles is system_auth as last applied here.
func (s *Service) Roles() *Roles { return s.roles.Load() }

// SetRoles takes system_auth as a change left it. Cached logins stay
// valid only while their role's hash is unchanged.
func (s *Service) SetRoles(r *Roles) { s.roles.Store(r) }

// HashPassword is the bcrypt hash system_auth keeps of a password.
func (s *Service) HashPassword(password string) (string, error) {
	h, err := bcrypt.GenerateFromPassword([]byte(password), s.cfg.BcryptCost)
	if err != nil {
		if errors.Is(err, bcrypt.ErrPasswordTooLong) {
			return "", errors.New("Password is too long: bcrypt takes at most 72 bytes")
		}
		return "", err
	}
	return string(h), nil
}

// incorrect is the refusal of a wrong password or an unknown role, the
// same for both, as Cassandra's.
func incorrect(user string) error {
	return fmt.Errorf("Provided username %s and/or password are incorrect", user)
}

// Authenticate checks a user's password, then that the role may log in.
func (s *Service) Authenticate(user, password string) error {
	rec := s.Roles().Role(user)
	if rec == nil || rec.SaltedHash == "" {
		// The same work as a wrong password, so that the answer's time
		// does not tell which roles exist.
		_ = bcrypt.CompareHashAndPassword(s.unknownRoleHash(), []byte(password))
		s.Failures.Add(1)
		return incorrect(user)
	}
	if !s.cached(user, rec.SaltedHash, password) {
		s.hashChecks.Add(1)
		if bcrypt.CompareHashAndPassword([]byte(rec.SaltedHash), []byte(password)) != nil {
			s.Failures.Add(1)
			return incorrect(user)
		}
		s.remember(user, rec.SaltedHash, password)
	}
	if !rec.Login {
		s.Failures.Add(1)
		return fmt.Errorf("%s is not permitted to log in", user)
	}
	return nil
}

// unknownRoleHash is the hash of a random password, of the cost of new
// hashes, compared against for roles that do not exist.
func (s *Service) unknownRoleHash() []byte {
	s.unknownOnce.Do(func() {
		var pw [16]byte
		_, _ = rand.Read(pw[:])
		s.unknown, _ = bcrypt.GenerateFromPassword(pw[:], s.cfg.BcryptCost)
	})
	return s.unknown
}

func (s *Service) digest(password string) [32]byte {
	mac := hmac.New(sha256.New, s.key[:])
	mac.Write([]byte(password))
	var d [32]byte
	copy(d[:], mac.Sum(nil))
	return d
}

// cached reports whether the password was checked against this hash
// within the validity period.
func (s *Service) cached(user, hash, password string) bool {
	if s.cfg.CredentialsValidity <= 0 {
		return false
	}
	s.mu.Lock()
	c, ok := s.creds[user]
	s.mu.Unlock()
	if !ok || c.hash != hash || s.cfg.Now().After(c.expires) {
		return false
	}
	d := s.digest(password)
	return hmac.Equal(d[:], c.digest[:])
}

func (s *Service) remember(user, hash, password string) {
	if s.cfg.CredentialsValidity <= 0 {
		return
	}
	c := credential{hash: hash, digest: s.digest(password), expires: s.cfg.Now().Add(s.cfg.CredentialsValidity)}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.creds[user]; !ok && len(s.creds) >= s.cfg.CredentialsCacheSize {
		for k := range s.creds { // any one goes: the cache only saves work
			delete(s.creds, k)
			break
		}
	}
	s.creds[user] = c
}

// DefaultSuperuserMutations create the default superuser, cassandra with
// the password cassandra, which a new cluster with PasswordAuthenticator
// starts with.
func (s *Service) DefaultSuperuserMutations(w *schema.CellWriter) ([]*mutation.Mutation, error) {
	h, err := s.HashPassword(DefaultSuperuserPassword)
	if err != nil {
		return nil, err
	}
	yes := true
	return CreateRole(w, DefaultSuperuser, RoleChange{Superuser: &yes, Login: &yes, SaltedHash: &h})
}
