package node

import (
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sibyldb/sibyl/virtual"
)

// settingRows are system_views.settings: every setting of the node's
// configuration, as it runs (defaults filled in), by its sibyl.yaml name;
// nested ones as Cassandra 4.1 names them, "client_encryption_options.enabled".
// Passwords are left out.
func settingRows(cfg Config) []virtual.Row {
	settings := map[string]*string{}
	flattenSettings(reflect.ValueOf(cfg), "", settings)
	names := make([]string, 0, len(settings))
	for name := range settings {
		names = append(names, name)
	}
	sort.Strings(names)
	rows := make([]virtual.Row, 0, len(names))
	for _, name := range names {
		r := virtual.Row{"name": virtual.Text(name)}
		if v := settings[name]; v != nil {
			r["value"] = virtual.Text(*v)
		}
		rows = append(rows, r)
	}
	return rows
}

// flattenSettings puts the settings of a struct in out, by name under
// prefix; nil is a setting with no value.
func flattenSettings(v reflect.Value, prefix string, out map[string]*string) {
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag, opts, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if tag == "-" || !f.IsExported() {
			continue
		}
		fv := v.Field(i)
		if opts == "inline" {
			flattenSettings(fv, prefix, out)
			continue
		}
		if tag == "" {
			tag = strings.ToLower(f.Name) // as the yaml package names it
		}
		name := prefix + tag
		if strings.Contains(tag, "password") {
			continue
		}
		text := settingText(fv)
		if fv.Kind() == reflect.Struct && text == nil {
			flattenSettings(fv, name+".", out)
			continue
		}
		out[name] = text
	}
}

// settingText is a setting's value as text, in sibyl.yaml's units; nil
// for none, and for a struct whose fields are settings of their own.
func settingText(v reflect.Value) *string {
	text := func(s string) *string { return &s }
	switch x := v.Interface().(type) {
	case Duration:
		return text(strconv.FormatInt(time.Duration(x).Milliseconds(), 10) + "ms")
	case Size:
		return text(sizeText(int64(x)))
	case Rate:
		return text(sizeText(int64(x)) + "/s")
	case SeedProvider:
		var params []string
		for _, p := range x.Parameters {
			keys := make([]string, 0, len(p))
			for k := range p {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				params = append(params, k+"="+p[k])
			}
		}
		return text(x.ClassName + "{" + strings.Join(params, ", ") + "}")
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return settingText(v.Elem())
	case reflect.Slice:
		if v.IsNil() {
			return nil
		}
		items := make([]string, v.Len())
		for i := range items {
			if s := settingText(v.Index(i)); s != nil {
				items[i] = *s
			}
		}
		return text("[" + strings.Join(items, ", ") + "]")
	case reflect.Struct, reflect.Func, reflect.Interface, reflect.Map, reflect.Chan:
		return nil
	}
	return text(fmt.Sprint(v.Interface()))
}

// sizeText is a size in the largest of sibyl.yaml's units that divides it.
func sizeText(b int64) string {
	for _, u := range []struct {
		unit string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b != 0 && b%u.size == 0 {
			return strconv.FormatInt(b/u.size, 10) + u.unit
		}
	}
	return strconv.FormatInt(b, 10) + "B"
}
