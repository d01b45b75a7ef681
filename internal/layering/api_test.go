package layering

import (
	"go/ast"
	"go/importer"
	"go/token"
	"go/types"
	"os/exec"
	"sort"
	"strings"
	"sync"
	"testing"
)

// TestOneImport checks that an application needs no import of ours but
// connector: every named type that connector's exported API leads to
// (through signatures, exported fields, exported methods, recursively) is
// either declared in connector, from the standard library, or declared
// elsewhere in this module and re-exported by connector under an alias.
// No type of a third-party module (go-zookeeper, sarama) may appear.
func TestOneImport(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks connector from source")
	}
	for _, b := range unnamedTypes(t, "connector") {
		t.Error(b)
	}
}

// TestStreamLeadsOnlyToTheConsumerSide checks the same of package stream,
// whose names are aliases of internal/streamcore's: nothing its exported
// API leads to may be a type it does not re-export, so no method added
// to a KafkaStream, an iterator or a Message can hand an application the
// producer side (a queue, a PartitionTopicInfo, a chunk, the Control).
func TestStreamLeadsOnlyToTheConsumerSide(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks stream from source")
	}
	for _, b := range unnamedTypes(t, "stream") {
		t.Error(b)
	}
}

// unnamedTypes walks the exported API of pkgPath (a package of this
// module) and describes every type it leads to that an importer of
// pkgPath alone cannot name: types of ours it does not alias, and
// third-party types.
func unnamedTypes(t *testing.T, pkgPath string) []string {
	t.Helper()
	pkg, err := fromSource().imp.ImportFrom(module+pkgPath, ".", 0)
	if err != nil {
		t.Fatalf("type-checking %s: %v", pkgPath, err)
	}

	aliased := map[*types.TypeName]bool{} // our types pkg re-exports
	for _, name := range pkg.Scope().Names() {
		tn, ok := pkg.Scope().Lookup(name).(*types.TypeName)
		if !ok || !tn.Exported() || !tn.IsAlias() {
			continue
		}
		if n, ok := types.Unalias(tn.Type()).(*types.Named); ok {
			aliased[n.Origin().Obj()] = true
		}
	}

	w := &apiWalker{seen: map[types.Type]bool{}, reached: map[*types.TypeName]string{}}
	for _, name := range pkg.Scope().Names() {
		obj := pkg.Scope().Lookup(name)
		if !obj.Exported() {
			continue
		}
		w.walk(obj.Type(), pkgPath+"."+name)
	}
	if len(w.reached) == 0 {
		t.Fatalf("%s's API leads to no type at all", pkgPath)
	}

	var bad []string
	for tn, via := range w.reached {
		p := tn.Pkg()
		switch {
		case p == nil || p == pkg || isStd(p.Path()):
		case strings.HasPrefix(p.Path(), module) || p.Path()+"/" == module:
			if !aliased[tn] {
				bad = append(bad, p.Path()+"."+tn.Name()+" (reached via "+via+") has no alias in "+pkgPath)
			}
		default:
			bad = append(bad, p.Path()+"."+tn.Name()+" (reached via "+via+") is a third-party type in "+pkgPath+"'s API")
		}
	}
	sort.Strings(bad)
	return bad
}

// sourceTypes is a type-checker of the module's packages from source,
// shared by the tests so that each package is checked once per run.
type sourceTypes struct {
	fset *token.FileSet
	imp  types.ImporterFrom
}

var fromSource = sync.OnceValue(func() sourceTypes {
	fset := token.NewFileSet()
	return sourceTypes{fset: fset, imp: importer.ForCompiler(fset, "source", nil).(types.ImporterFrom)}
})

func isStd(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// apiWalker collects the named types an application can reach.
type apiWalker struct {
	seen    map[types.Type]bool
	reached map[*types.TypeName]string
}

func (w *apiWalker) walk(t types.Type, via string) {
	if t == nil || w.seen[t] {
		return
	}
	w.seen[t] = true
	switch t := t.(type) {
	case *types.Alias:
		w.walk(types.Unalias(t), via)
	case *types.Named:
		obj := t.Origin().Obj()
		if _, ok := w.reached[obj]; !ok {
			w.reached[obj] = via
		}
		if obj.Pkg() != nil && isStd(obj.Pkg().Path()) {
			return // what the standard library leads to is not ours
		}
		for i := range t.NumMethods() {
			if m := t.Method(i); m.Exported() {
				w.walk(m.Type(), via+"."+m.Name())
			}
		}
		for i := range t.TypeArgs().Len() {
			w.walk(t.TypeArgs().At(i), via)
		}
		w.walk(t.Underlying(), via)
	case *types.Pointer:
		w.walk(t.Elem(), via)
	case *types.Slice:
		w.walk(t.Elem(), via)
	case *types.Array:
		w.walk(t.Elem(), via)
	case *types.Map:
		w.walk(t.Key(), via)
		w.walk(t.Elem(), via)
	case *types.Chan:
		w.walk(t.Elem(), via)
	case *types.Signature:
		w.walk(t.Params(), via)
		w.walk(t.Results(), via)
	case *types.Tuple:
		for i := range t.Len() {
			w.walk(t.At(i).Type(), via)
		}
	case *types.Struct:
		for i := range t.NumFields() {
			if f := t.Field(i); f.Exported() {
				w.walk(f.Type(), via+"."+f.Name())
			}
		}
	case *types.Interface:
		for i := range t.NumMethods() {
			if m := t.Method(i); ast.IsExported(m.Name()) {
				w.walk(m.Type(), via+"."+m.Name())
			}
		}
	}
}

// TestExamplesImportConnectorAlone: the example programs an application
// would start from import nothing of this module but connector. The
// console consumer (a port of Kafka's tool, which also reads and deletes
// a group's ZooKeeper nodes through zkutil) and examples/demo (which
// starts a cluster) are tools, not applications.
func TestExamplesImportConnectorAlone(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"examples/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	tools := map[string]bool{module + "examples/console-consumer": true, module + "examples/demo": true, module + "examples/examples_test": true}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, " ")
		if tools[pkg] {
			continue
		}
		checked++
		for _, imp := range strings.Fields(imports) {
			if strings.HasPrefix(imp, module) && imp != module+"connector" {
				t.Errorf("%s imports %s: an application should need connector alone", strings.TrimPrefix(pkg, module), strings.TrimPrefix(imp, module))
			}
		}
	}
	if checked < 4 {
		t.Fatalf("only %d example programs checked: go list printed\n%s", checked, out)
	}
}
