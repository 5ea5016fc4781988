package schema

import (
	"errors"
	"fmt"
)

// MaxNameLength is the longest keyspace or table name: Cassandra's rule
// for keyspaces, and Sibyl's for tables too, since a table's directory is
// its name, a dash and 32 hex digits, and every name must make a file name
// any filesystem takes. (Cassandra 4.1 checks a table name's characters
// only, although its message gives the same limit.)
const MaxNameLength = 48

// ConfigurationError is a definition Cassandra refuses as a configuration
// problem (ConfigurationException) rather than as an invalid request.
type ConfigurationError struct{ msg string }

func (e *ConfigurationError) Error() string { return e.msg }

func configErrorf(format string, args ...any) error {
	return &ConfigurationError{msg: fmt.Sprintf(format, args...)}
}

// asConfigurationError marks err as a ConfigurationError, keeping its
// message.
func asConfigurationError(err error) error {
	if err == nil {
		return nil
	}
	var ce *ConfigurationError
	if errors.As(err, &ce) {
		return err
	}
	return &ConfigurationError{msg: err.Error()}
}

// validName reports whether name is 1 to MaxNameLength letters, digits and
// underscores (ASCII).
func validName(name string) bool {
	if name == "" || len(name) > MaxNameLength {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// CheckKeyspaceName refuses a keyspace name Cassandra refuses, with its
// message (an invalid request).
func CheckKeyspaceName(name string) error {
	if !validName(name) {
		return fmt.Errorf("Keyspace name must not be empty, more than %d characters long, or contain non-alphanumeric-underscore characters (got '%s')", MaxNameLength, name)
	}
	return nil
}

// CheckTableName refuses a table name that is not 1 to MaxNameLength
// letters, digits and underscores, with Cassandra's message (a
// configuration error).
func CheckTableName(keyspace, name string) error {
	if !validName(name) {
		return configErrorf("%s.%s: Table name must not be empty, more than %d characters long, or contain non-alphanumeric-underscore characters (got \"%s\")",
			keyspace, name, MaxNameLength, name)
	}
	return nil
}
