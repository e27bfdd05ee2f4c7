package engines_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Every optional capability declared in capabilities.go is claimed somewhere with a compile-time
// check (var _ engines.X = (*T)(nil)) in an engine package: a capability nobody checks is one a
// renamed method would switch off without a build error.
func TestEveryCapabilityIsChecked(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "capabilities.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	caps := interfacesOf(f)
	if len(caps) < 20 {
		t.Fatalf("capabilities.go declares %d interfaces (%v); expected every optional capability there", len(caps), caps)
	}
	checked := map[string][]string{}
	err = filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, c := range checksIn(src) {
			checked[c] = append(checked[c], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range caps {
		if len(checked[c]) == 0 {
			t.Errorf("engines.%s has no compile-time check (var _ engines.%s = (*T)(nil)) in any engine package", c, c)
		}
	}
}

// The scan itself: it finds the checks a file declares, in a var block or alone, and only those.
func TestChecksInFindsCompileTimeChecks(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"block", "package p\nimport \"qbench/engines\"\nvar (\n_ engines.Sweeper = (*e)(nil)\n_ engines.Clock = (*e)(nil)\n)\n", []string{"Clock", "Sweeper"}},
		{"single", "package p\nimport \"qbench/engines\"\nvar _ engines.Crasher = (*m)(nil)\n", []string{"Crasher"}},
		{"named var is not a check", "package p\nimport \"qbench/engines\"\nvar x engines.Crasher = (*m)(nil)\n", nil},
		{"other package", "package p\nimport \"io\"\nvar _ io.Reader = (*m)(nil)\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parser.ParseFile(token.NewFileSet(), "x.go", tc.src, 0)
			if err != nil {
				t.Fatal(err)
			}
			got := checksIn(f)
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("checks %v, want %v", got, tc.want)
			}
		})
	}
}

// interfacesOf lists the interface types a file declares.
func interfacesOf(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.TYPE {
			continue
		}
		for _, s := range g.Specs {
			ts := s.(*ast.TypeSpec)
			if _, ok := ts.Type.(*ast.InterfaceType); ok {
				out = append(out, ts.Name.Name)
			}
		}
	}
	return out
}

// checksIn lists X for every `var _ engines.X = ...` in a file.
func checksIn(f *ast.File) []string {
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			if len(vs.Names) != 1 || vs.Names[0].Name != "_" || len(vs.Values) != 1 {
				continue
			}
			sel, ok := vs.Type.(*ast.SelectorExpr)
			if !ok {
				continue
			}
			if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "engines" {
				out = append(out, sel.Sel.Name)
			}
		}
	}
	return out
}
