package lint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/sibyldb/sibyl"

// allowedImports is the import-direction table of docs/architecture.md:
// each package and the Sibyl packages it may import (outside tests).
// internal/invariants may be imported by every package, and cqltype by every
// package above partitioner; the table leaves them out.
var allowedImports = map[string][]string{
	"partitioner":      {},
	"cqltype":          {},
	"mutation":         {"partitioner"},
	"tracing":          {},
	"mutation/request": {"mutation", "partitioner", "tracing"},
	"memtable":         {"mutation", "partitioner"},
	"sstable":          {"mutation", "partitioner", "internal/durable", "internal/histogram"},
	"commitlog":        {"mutation", "partitioner", "internal/durable"},
	"storage":          {"memtable", "sstable", "commitlog", "mutation", "mutation/request", "partitioner", "tracing", "internal/histogram", "internal/workers", "internal/topk", "internal/ann"},
	"schema":           {"mutation", "partitioner"},
	"cql":              {},
	"cql/exec":         {"cql", "schema", "mutation", "mutation/request", "partitioner", "auth", "tracing", "internal/ann"},
	"auth":             {"schema", "mutation", "cqltype"},
	"cql/native":       {"cql/exec", "cql", "mutation/request", "internal/workers", "tracing"},
	"ring":             {"partitioner"},
	"gossip":           {},
	"messaging":        {"internal/workers", "internal/tlsconf", "internal/histogram"},
	"coordinator":      {"ring", "messaging", "mutation", "mutation/request", "partitioner", "schema", "cqltype", "internal/wire", "hints", "tracing", "internal/histogram", "internal/workers"},
	"hints":            {"mutation"},
	"streaming":        {"storage", "sstable", "messaging", "mutation", "partitioner", "internal/wire"},
	"repair":           {"coordinator", "storage", "messaging", "mutation", "partitioner", "internal/wire"},
	"metadata":         {"internal/wire", "internal/durable", "messaging"},
	"virtual":          {"schema", "storage", "mutation", "mutation/request", "partitioner"},
	"node": {"cql/native", "cql/exec", "auth", "tracing", "internal/histogram", "internal/workers", "internal/tlsconf", "coordinator", "hints", "streaming", "repair", "metadata", "gossip", "messaging", "ring", "schema",
		"storage", "mutation", "mutation/request", "partitioner", "virtual", "internal/topk", "internal/ann"},
	"tools":               {},
	"tools/cqlsh":         {},
	"tools/nodetool":      {"internal/tlsconf", "internal/histogram"},
	"tools/stress":        {},
	"tools/cluster":       {"tools/nodetool", "internal/tlsconf"},
	"cmd/sibyl":           {"tools", "tools/cqlsh", "tools/nodetool", "tools/stress", "tools/cluster", "node", "internal/tlsconf"},
	"internal/lint":       {},
	"internal/invariants": {},
	"internal/workers":    {},
	"internal/wire":       {},
	"internal/durable":    {},
	"internal/histogram":  {},
	"internal/topk":       {},
	"internal/ann":        {},
	"internal/tlsconf":    {},
	"internal/testutil":   {"mutation", "partitioner", "internal/tlsconf"},
	"test/clients":        {"node", "cql/native", "cql/exec", "cqltype", "tools/cqlsh", "tools/nodetool", "tools/stress", "internal/tlsconf", "internal/ann"},
	"test/differential":   {"node", "cqltype"},
	"simulation": {"node", "coordinator", "tracing", "hints", "streaming", "metadata", "cql/exec", "gossip", "messaging", "mutation", "mutation/request", "partitioner", "ring",
		"schema", "storage", "cqltype"},
	"bench": {"internal/ann", "storage", "commitlog", "mutation", "mutation/request", "partitioner", "internal/testutil", "node", "cql", "cql/exec",
		"schema", "cqltype"},
}

// testOnlyImports are what a package's tests may import beyond its own table.
var testOnlyImports = map[string][]string{
	"*":       {"internal/testutil"},
	"storage": {"internal/testutil"},
	// streaming's and repair's tests open engines, which take commit log
	// options.
	"streaming": {"commitlog"},
	"repair":    {"commitlog"},
	"virtual":   {"commitlog"},
}

// neverCQLType lists the packages that may not use cqltype (it sits above them).
var neverCQLType = map[string]bool{"partitioner": true, "cqltype": true, "gossip": true, "messaging": true,
	"internal/invariants": true, "internal/lint": true, "internal/workers": true, "internal/histogram": true, "internal/wire": true, "internal/durable": true,
	"internal/ann": true}

type goPackage struct {
	ImportPath   string
	Dir          string
	Name         string
	GoFiles      []string
	TestGoFiles  []string
	XTestGoFiles []string
	Imports      []string
	TestImports  []string
	XTestImports []string
}

func listPackages(t *testing.T) []goPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p goPackage
		if err := dec.Decode(&p); err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		t.Fatalf("repository root not found from %s", dir)
	}
	return dir
}

func relPkg(importPath string) string {
	if importPath == module {
		return "."
	}
	return strings.TrimPrefix(importPath, module+"/")
}

func allowedEdge(from, to string, test bool) bool {
	if to == "internal/invariants" {
		return true
	}
	if to == "cqltype" && !neverCQLType[from] {
		return true
	}
	for _, a := range allowedImports[from] {
		if a == to {
			return true
		}
	}
	if test {
		if to == from {
			return true
		}
		for _, a := range append(testOnlyImports["*"], testOnlyImports[from]...) {
			if a == to {
				return true
			}
		}
	}
	return false
}

// Rule 1: import direction.
func TestImportDirection(t *testing.T) {
	for _, p := range listPackages(t) {
		from := relPkg(p.ImportPath)
		if _, ok := allowedImports[from]; !ok {
			t.Errorf("package %s is not in the import table of internal/lint (add it, following docs/architecture.md)", from)
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				if !strings.HasPrefix(imp, module+"/") {
					continue
				}
				to := relPkg(imp)
				if !allowedEdge(from, to, test) {
					t.Errorf("import direction: %s may not import %s (docs/architecture.md)", from, to)
				}
			}
		}
		check(p.Imports, false)
		check(p.TestImports, true)
		check(p.XTestImports, true)
	}
}

// confinedDeps maps a third-party import path prefix to where it may be used.
// A place is a package path prefix; "test" allows _test.go files anywhere.
var confinedDeps = []struct {
	dep    string
	places []string
}{
	{"github.com/spf13/cobra", []string{"cmd/"}},
	{"github.com/rs/zerolog/log", []string{"cmd/"}},
	// gossip builds the *log.Logger memberlist's transport takes (its
	// lines go on to zerolog through logWriter).
	{"log", []string{"cmd/", "gossip"}},
	{"github.com/gocql/gocql", []string{"tools/", "test", "bench", "cmd/"}},
	{"github.com/chzyer/readline", []string{"tools/"}},
	// simulation carries gossip over its own network: memberlist's
	// Transport, which gossip.Options takes.
	{"github.com/hashicorp/memberlist", []string{"gossip", "simulation"}},
	{"github.com/prometheus/client_golang", []string{"node"}},
	{"github.com/cockroachdb/pebble/sstable", []string{"sstable", "bench", "test"}},
	{"github.com/cockroachdb/pebble/objstorage", []string{"sstable", "bench", "test"}},
	{"github.com/cockroachdb/pebble/bloom", []string{"sstable", "bench", "test"}},
	{"github.com/cockroachdb/pebble/internal", []string{"sstable", "bench", "test"}},
	{"github.com/cockroachdb/pebble/vfs", []string{"commitlog", "sstable", "storage", "coordinator", "metadata", "internal/durable", "node",
		"hints", "streaming", "simulation", "bench", "test"}},
	{"go.etcd.io/raft", []string{"metadata"}},
	{"github.com/anishathalye/porcupine", []string{"test"}},
	// sstable takes the block cache constructor from the root package: pebble v1
	// has no public cache package.
	{"github.com/cockroachdb/pebble", []string{"bench", "test", "sstable"}},
	// The node's distributions are internal/histogram's; stress keeps its own.
	{"github.com/HdrHistogram/hdrhistogram-go", []string{"internal/histogram", "tools/", "bench", "test"}},
}

// Rule 2: confined dependencies.
func TestConfinedDependencies(t *testing.T) {
	for _, p := range listPackages(t) {
		rel := relPkg(p.ImportPath)
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				for _, c := range confinedDeps {
					if imp != c.dep && !strings.HasPrefix(imp, c.dep+"/") {
						continue
					}
					ok := false
					for _, place := range c.places {
						if (place == "test" && test) || rel == strings.TrimSuffix(place, "/") ||
							(strings.HasSuffix(place, "/") && strings.HasPrefix(rel, place)) {
							ok = true
						}
					}
					if !ok {
						t.Errorf("confined dependency: %s imports %s, allowed only in %v", rel, imp, c.places)
					}
					break
				}
			}
		}
		check(p.Imports, false)
		check(p.TestImports, true)
		check(p.XTestImports, true)
	}
}

// Rule 3: no pebble types leak through the public API of sstable and storage.
func TestNoPebbleTypesLeak(t *testing.T) {
	root := repoRoot(t)
	// Qualified pebble identifiers as go doc prints them. In storage's doc
	// "sstable." names our own package, so it is only checked in sstable's.
	qualifiers := map[string]string{
		"sstable": `\b(pebble|base|cache|objstorage|vfs|bloom|keyspan|sstable)\.[A-Z]\w*`,
		"storage": `\b(pebble|base|cache|objstorage|vfs|bloom|keyspan)\.[A-Z]\w*`,
	}
	for _, pkg := range []string{"sstable", "storage"} {
		if _, err := os.Stat(filepath.Join(root, pkg)); err != nil {
			continue
		}
		cmd := exec.Command("go", "doc", "-all", "./"+pkg)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go doc %s: %v", pkg, err)
		}
		re := regexp.MustCompile(qualifiers[pkg])
		for i, line := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "//") {
				continue
			}
			for _, m := range re.FindAllString(line, -1) {
				if m != "vfs.FS" {
					t.Errorf("%s: go doc line %d exposes the pebble identifier %s: %s", pkg, i+1, m, strings.TrimSpace(line))
				}
			}
		}
	}
}

type sourceFile struct {
	pkg  string // package path relative to the module
	path string // relative to the repository root
	file *ast.File
	fset *token.FileSet
	test bool
	text []byte
}

func parseSources(t *testing.T) []sourceFile {
	t.Helper()
	root := repoRoot(t)
	var files []sourceFile
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "data" || name == "bin") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, rel, text, parser.ParseComments)
		if err != nil {
			return err
		}
		files = append(files, sourceFile{
			pkg: filepath.ToSlash(filepath.Dir(rel)), path: filepath.ToSlash(rel), file: f, fset: fset,
			test: strings.HasSuffix(path, "_test.go"), text: text,
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// ignored reports whether the line above pos carries //lint:ignore rule.
func (s sourceFile) ignored(pos token.Pos, rule string) bool {
	line := s.fset.Position(pos).Line
	for _, cg := range s.file.Comments {
		for _, c := range cg.List {
			if s.fset.Position(c.Slash).Line == line-1 && strings.HasPrefix(c.Text, "//lint:ignore "+rule) {
				return true
			}
		}
	}
	return false
}

func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) != path {
			continue
		}
		if imp.Name != nil {
			return imp.Name.Name
		}
		return defaultPackageName(path)
	}
	return ""
}

// defaultPackageName is the name an import path binds without a rename:
// its last element, skipping a major-version suffix (math/rand/v2 is rand).
func defaultPackageName(path string) string {
	parts := strings.Split(path, "/")
	name := parts[len(parts)-1]
	if len(parts) > 1 && len(name) > 1 && name[0] == 'v' && strings.Trim(name[1:], "0123456789") == "" {
		name = parts[len(parts)-2]
	}
	return name
}

// selectorCalls visits every pkg.Name selector in f where pkg refers to the import path.
func selectors(f *ast.File, importPath string, visit func(sel *ast.SelectorExpr)) {
	name := importName(f, importPath)
	if name == "" || name == "_" {
		return
	}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == name && id.Obj == nil {
				visit(sel)
			}
		}
		return true
	})
}

// Rule 4: files go through vfs in the storage packages.
func TestFilesThroughVFS(t *testing.T) {
	banned := map[string]bool{"Open": true, "OpenFile": true, "Create": true, "Remove": true, "RemoveAll": true,
		"Rename": true, "MkdirAll": true, "Mkdir": true, "ReadFile": true, "WriteFile": true, "Stat": true,
		"ReadDir": true, "Lstat": true, "Truncate": true}
	for _, s := range parseSources(t) {
		if s.test || !(s.pkg == "commitlog" || s.pkg == "sstable" || s.pkg == "storage" || s.pkg == "memtable" || s.pkg == "coordinator" || s.pkg == "metadata") {
			continue
		}
		selectors(s.file, "os", func(sel *ast.SelectorExpr) {
			if banned[sel.Sel.Name] && !s.ignored(sel.Pos(), "FilesThroughVFS") {
				t.Errorf("%s: os.%s bypasses vfs.FS (use the injected filesystem)", s.fset.Position(sel.Pos()), sel.Sel.Name)
			}
		})
	}
}

// Rule 5: deterministic cores.
func TestDeterministicCores(t *testing.T) {
	bannedTime := map[string]bool{"Now": true, "Sleep": true, "After": true, "NewTimer": true, "NewTicker": true,
		"AfterFunc": true, "Tick": true, "Since": true, "Until": true}
	for _, s := range parseSources(t) {
		core := s.pkg == "partitioner" || s.pkg == "mutation" || s.pkg == "mutation/request" || s.pkg == "ring" ||
			((s.pkg == "gossip" || s.pkg == "coordinator" || s.pkg == "metadata") && !strings.HasSuffix(s.path, "_driver.go"))
		if s.test || !core {
			continue
		}
		selectors(s.file, "time", func(sel *ast.SelectorExpr) {
			if bannedTime[sel.Sel.Name] && !s.ignored(sel.Pos(), "DeterministicCores") {
				t.Errorf("%s: time.%s in a deterministic core (inject a clock)", s.fset.Position(sel.Pos()), sel.Sel.Name)
			}
		})
		// A timeout is the driver's to set, on the injected clock.
		selectors(s.file, "context", func(sel *ast.SelectorExpr) {
			if n := sel.Sel.Name; (n == "WithTimeout" || n == "WithDeadline") && !s.ignored(sel.Pos(), "DeterministicCores") {
				t.Errorf("%s: context.%s in a deterministic core (the driver code sets timeouts)", s.fset.Position(sel.Pos()), n)
			}
		})
		for _, rnd := range []string{"math/rand", "math/rand/v2"} {
			selectors(s.file, rnd, func(sel *ast.SelectorExpr) {
				name := sel.Sel.Name
				if name == "Rand" || name == "Source" || name == "New" || name == "NewPCG" || name == "NewSource" ||
					name == "PCG" || name == "NewChaCha8" || name == "ChaCha8" || name == "Zipf" || name == "NewZipf" {
					return
				}
				if !s.ignored(sel.Pos(), "DeterministicCores") {
					t.Errorf("%s: global rand.%s in a deterministic core (inject a *rand.Rand)", s.fset.Position(sel.Pos()), name)
				}
			})
		}
		ast.Inspect(s.file, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok && !s.ignored(g.Pos(), "DeterministicCores") {
				t.Errorf("%s: go statement in a deterministic core", s.fset.Position(g.Pos()))
			}
			return true
		})
	}
}

// Rule 6: every package has a doc.go with its ownership lines.
func TestPackageDoc(t *testing.T) {
	root := repoRoot(t)
	for _, p := range listPackages(t) {
		rel := relPkg(p.ImportPath)
		path := filepath.Join(root, rel, "doc.go")
		text, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("package %s has no doc.go", rel)
			continue
		}
		s := string(text)
		want := "// Package " + p.Name + " "
		if p.Name == "main" {
			want = "// Command " + filepath.Base(rel) + " "
		}
		if !strings.Contains(s, want) {
			t.Errorf("%s/doc.go: the comment must start %q", rel, want)
		}
		for _, line := range []string{"Owns:", "Must not import:"} {
			if !strings.Contains(s, line) {
				t.Errorf("%s/doc.go: missing the %q line", rel, line)
			}
		}
	}
}

// Rule 7: panics carry assertion errors.
func TestPanicsCarryAssertions(t *testing.T) {
	for _, s := range parseSources(t) {
		if s.test || s.pkg == "internal/lint" {
			continue
		}
		inv := importName(s.file, module+"/internal/invariants")
		ast.Inspect(s.file, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if id, ok := call.Fun.(*ast.Ident); !ok || id.Name != "panic" || len(call.Args) != 1 {
				return true
			}
			if inner, ok := call.Args[0].(*ast.CallExpr); ok {
				if sel, ok := inner.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && inv != "" && x.Name == inv && sel.Sel.Name == "Failf" {
						return true
					}
				}
				if id, ok := inner.Fun.(*ast.Ident); ok && s.pkg == "internal/invariants" && id.Name == "Failf" {
					return true
				}
			}
			if !s.ignored(call.Pos(), "PanicsCarryAssertions") {
				t.Errorf("%s: panic must take invariants.Failf(...)", s.fset.Position(call.Pos()))
			}
			return true
		})
	}
}

// Rule 8: every exported Options type has EnsureDefaults() and Validate() error.
func TestOptionsShape(t *testing.T) {
	type methods struct{ ensure, validate bool }
	found := map[string]*methods{} // pkg.Type -> methods
	var order []string
	for _, s := range parseSources(t) {
		if s.test {
			continue
		}
		for _, decl := range s.file.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() || !strings.HasSuffix(ts.Name.Name, "Options") {
						continue
					}
					if _, isStruct := ts.Type.(*ast.StructType); !isStruct {
						continue
					}
					key := s.pkg + "." + ts.Name.Name
					if found[key] == nil {
						found[key] = &methods{}
					}
					order = append(order, key)
				}
			case *ast.FuncDecl:
				if d.Recv == nil || len(d.Recv.List) != 1 {
					continue
				}
				typ := d.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				id, ok := typ.(*ast.Ident)
				if !ok || !strings.HasSuffix(id.Name, "Options") {
					continue
				}
				key := s.pkg + "." + id.Name
				if found[key] == nil {
					found[key] = &methods{}
				}
				switch d.Name.Name {
				case "EnsureDefaults":
					found[key].ensure = true
				case "Validate":
					res := d.Type.Results
					found[key].validate = res != nil && len(res.List) == 1 && fmt.Sprint(res.List[0].Type) == "error"
				}
			}
		}
	}
	sort.Strings(order)
	for _, key := range order {
		m := found[key]
		if !m.ensure || !m.validate {
			t.Errorf("%s: an Options type needs EnsureDefaults() and Validate() error", key)
		}
	}
}

// Rule 9: decoders are fuzzed.
func TestDecodersFuzzed(t *testing.T) {
	fuzzed := map[string]bool{}
	present := map[string]bool{}
	for _, s := range parseSources(t) {
		present[s.pkg] = true
		if !s.test {
			continue
		}
		for _, decl := range s.file.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && strings.HasPrefix(fn.Name.Name, "Fuzz") && fn.Recv == nil {
				fuzzed[s.pkg] = true
			}
		}
	}
	for _, pkg := range []string{"partitioner", "cqltype", "mutation", "commitlog", "sstable", "cql", "cql/native", "messaging",
		"coordinator", "gossip", "metadata", "hints", "streaming", "repair"} {
		if present[pkg] && !fuzzed[pkg] {
			t.Errorf("package %s decodes bytes but has no FuzzXxx test", pkg)
		}
	}
}

// Rule 10: file-size tripwire.
func TestFileSize(t *testing.T) {
	allowed := map[string]bool{}
	f, err := os.Open("bigfiles.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Fields(line)
		if len(fields) < 2 {
			t.Errorf("bigfiles.txt: %q needs a reason after the path", line)
			continue
		}
		allowed[fields[0]] = true
	}
	for _, s := range parseSources(t) {
		if s.test || bytes.Contains(s.text, []byte("// Code generated")) {
			continue
		}
		if n := bytes.Count(s.text, []byte("\n")); n > 1500 && !allowed[s.path] {
			t.Errorf("%s has %d lines (over 1,500): split it or list it with a reason in internal/lint/bigfiles.txt", s.path, n)
		}
	}
}
