package node

import (
	"bufio"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/sibyldb/sibyl/gossip"
)

// The admin_authentication values.
const (
	AdminAuthNone         = "none"
	AdminAuthRoles        = "roles"
	AdminAuthPasswordFile = "password_file"
)

// adminRealm is what a refused admin request names for its credentials.
const adminRealm = `Basic realm="sibyl admin", charset="UTF-8"`

// ReadAdminPasswordFile reads a password file as JMX's jmxremote.password
// is written: one "user password" a line, # comments. As JMX does, it
// refuses a file others than its owner may read.
func ReadAdminPasswordFile(path string) (map[string]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%s may be read by others than its owner (mode %#o): chmod 600 it", path, fi.Mode().Perm())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		fields := strings.Fields(text)
		if len(fields) != 2 {
			return nil, fmt.Errorf("%s:%d: want \"user password\"", path, line)
		}
		out[fields[0]] = fields[1]
	}
	return out, sc.Err()
}

// adminAuthenticated is the admin API behind admin_authentication: HTTP
// basic credentials, checked against the roles (a superuser that may log
// in) or the password file. A request without them, or with wrong ones,
// is refused (401), logged and counted.
func (n *Node) adminAuthenticated(next http.Handler) (http.Handler, error) {
	var check func(user, password string) error
	switch n.cfg.AdminAuthentication {
	case "", AdminAuthNone:
		return next, nil
	case AdminAuthRoles:
		check = func(user, password string) error {
			if err := n.auth.Authenticate(user, password); err != nil {
				return errors.New("Invalid username or password")
			}
			if !n.auth.Roles().IsSuperuser(user) {
				return fmt.Errorf("%s is not a superuser", user)
			}
			return nil
		}
	case AdminAuthPasswordFile:
		users, err := ReadAdminPasswordFile(n.cfg.AdminPasswordFile)
		if err != nil {
			return nil, fmt.Errorf("admin_password_file: %w", err)
		}
		check = func(user, password string) error {
			want, ok := users[user]
			if !ok || subtle.ConstantTimeCompare([]byte(want), []byte(password)) != 1 {
				return errors.New("Invalid username or password")
			}
			return nil
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		user, password, ok := r.BasicAuth()
		var err error
		if !ok {
			err = errors.New("Credentials required")
		} else {
			err = check(user, password)
		}
		if err == nil {
			next.ServeHTTP(w, r)
			return
		}
		n.metrics.adminRefusals.Add(1)
		n.cfg.Logger.Warn().Str("client", r.RemoteAddr).Str("user", user).Str("error", err.Error()).Str("path", r.URL.Path).
			Msg("admin API: a request was refused")
		w.Header().Set("WWW-Authenticate", adminRealm)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		_ = json.NewEncoder(w).Encode(AdminErrorBody{Error: "Authentication failed! " + err.Error(), Failure: true})
	}), nil
}

// adminGossipKeys lists the gossip keys (GET: their fingerprints, the
// sealing one first) or changes them (POST, a form with action=install,
// use or remove and key=base64): a rotation's steps at run time, node by
// node. Keys are changed only through an authenticated admin API: one
// anyone on the network may use would hand out the seal.
func (n *Node) adminGossipKeys(r *http.Request) (any, error) {
	g := n.gossiper()
	if g == nil {
		return nil, badRequest("this node runs alone: it has no gossip")
	}
	if r.Method == http.MethodPost {
		if n.cfg.AdminAuthentication == "" || n.cfg.AdminAuthentication == AdminAuthNone {
			return nil, badArgument("gossip keys are changed only through an admin API that asks for credentials (admin_authentication)")
		}
		action, encoded := r.PostFormValue("action"), r.PostFormValue("key")
		key, err := base64.StdEncoding.DecodeString(encoded)
		if err == nil {
			err = gossip.CheckKey(key)
		}
		if err != nil {
			return nil, badRequest("gossip key: not a base64 AES key of 16, 24 or 32 bytes")
		}
		switch action {
		case "install":
			err = g.InstallKey(key)
		case "use":
			err = g.UseKey(key)
		case "remove":
			err = g.RemoveKey(key)
		default:
			return nil, badRequest("gossip keys: %q is not one of install, use, remove", action)
		}
		if err != nil {
			return nil, badArgument("gossip keys: %v", err)
		}
		n.cfg.Logger.Warn().Str("action", action).Str("key", KeyFingerprint(key)).Msg("gossip: the keys changed (until a restart: change gossip_encryption_keys too)")
	}
	keys, err := g.Keys()
	if err != nil {
		return nil, badArgument("%v", err)
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = KeyFingerprint(k)
	}
	return out, nil
}

// KeyFingerprint names a gossip key without giving it away: the first
// eight bytes of its SHA-256, in hex.
func KeyFingerprint(key []byte) string {
	sum := sha256.Sum256(key)
	return hex.EncodeToString(sum[:8])
}
