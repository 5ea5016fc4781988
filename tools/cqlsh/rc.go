package cqlsh

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// RC is a cqlshrc file, as cqlsh reads it: INI sections of key = value
// lines; ; and # begin comments.
type RC map[string]map[string]string

// ReadRC reads a cqlshrc. A file that is not there is an empty RC.
func ReadRC(path string) (RC, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return RC{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseRC(f, path)
}

// ParseRC parses a cqlshrc's text; name names it in errors.
func ParseRC(r io.Reader, name string) (RC, error) {
	rc := RC{}
	section := ""
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || text[0] == ';' || text[0] == '#' {
			continue
		}
		if strings.HasPrefix(text, "[") {
			if !strings.HasSuffix(text, "]") {
				return nil, fmt.Errorf("%s:%d: a section header without its ]", name, line)
			}
			section = strings.ToLower(strings.TrimSpace(text[1 : len(text)-1]))
			continue
		}
		key, value, ok := strings.Cut(text, "=")
		if !ok {
			key, value, ok = strings.Cut(text, ":")
		}
		if !ok {
			return nil, fmt.Errorf("%s:%d: %q is not key = value", name, line, text)
		}
		if section == "" {
			return nil, fmt.Errorf("%s:%d: %q is outside any section", name, line, text)
		}
		if rc[section] == nil {
			rc[section] = map[string]string{}
		}
		rc[section][strings.ToLower(strings.TrimSpace(key))] = strings.TrimSpace(value)
	}
	return rc, sc.Err()
}

// Get is a key of a section, or "".
func (rc RC) Get(section, key string) string { return rc[section][key] }

// Bool is a boolean key of a section (true, yes, on or 1, as Python's
// configparser takes them), or byDefault when absent.
func (rc RC) Bool(section, key string, byDefault bool) (bool, error) {
	v := rc.Get(section, key)
	switch strings.ToLower(v) {
	case "":
		return byDefault, nil
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, fmt.Errorf("[%s] %s: %q is not a boolean", section, key, v)
}

// Int is an integer key of a section, or byDefault when absent.
func (rc RC) Int(section, key string, byDefault int) (int, error) {
	v := rc.Get(section, key)
	if v == "" {
		return byDefault, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("[%s] %s: %q is not a number", section, key, v)
	}
	return n, nil
}

// Seconds is a key of a section giving seconds (a float, as cqlsh reads
// it), or byDefault when absent.
func (rc RC) Seconds(section, key string, byDefault time.Duration) (time.Duration, error) {
	v := rc.Get(section, key)
	if v == "" {
		return byDefault, nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1e6 {
		return 0, fmt.Errorf("[%s] %s: %q is not a number of seconds", section, key, v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// Path is a file key of a section with ~ expanded, or "".
func (rc RC) Path(section, key string) string {
	v := rc.Get(section, key)
	if rest, ok := strings.CutPrefix(v, "~/"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, rest)
		}
	}
	return v
}
