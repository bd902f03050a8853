// Command housestats prints the size figures issue 20 ("the house") is
// judged by, for the packages named on its command line (directories,
// default: proxy and acp): non-test lines per package, and the structs with
// more than -fields fields, the types with more than -methods methods and
// the functions longer than -lines lines, largest first.
//
//	go run ./internal/housestats proxy acp
//
// It reads source with go/parser only; generated files (a "Code generated"
// header) and _test.go files are left out.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

func main() {
	maxFields := flag.Int("fields", 25, "list structs with more fields than this")
	maxMethods := flag.Int("methods", 40, "list types with more methods than this")
	maxLines := flag.Int("lines", 120, "list functions longer than this many lines")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = []string{"proxy", "acp"}
	}
	status := 0
	for _, dir := range dirs {
		if err := report(dir, *maxFields, *maxMethods, *maxLines); err != nil {
			fmt.Fprintf(os.Stderr, "housestats: %s: %v\n", dir, err)
			status = 1
		}
	}
	os.Exit(status)
}

type item struct {
	name string
	n    int
}

func report(dir string, maxFields, maxMethods, maxLines int) error {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return err
	}
	lines, nfiles := 0, 0
	var structs, funcs []item
	methods := map[string]int{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		af, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(af) {
			continue
		}
		nfiles++
		lines += strings.Count(string(src), "\n")
		base := filepath.Base(f)
		ast.Inspect(af, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok {
					c := 0
					for _, fl := range st.Fields.List {
						if len(fl.Names) == 0 {
							c++
						} else {
							c += len(fl.Names)
						}
					}
					structs = append(structs, item{n.Name.Name, c})
				}
			case *ast.FuncDecl:
				name := n.Name.Name
				if n.Recv != nil && len(n.Recv.List) == 1 {
					t := recvName(n.Recv.List[0].Type)
					methods[t]++
					name = t + "." + name
				}
				l := fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1
				funcs = append(funcs, item{base + ": " + name, l})
			}
			return true
		})
	}
	fmt.Printf("%s: %d lines in %d files (non-test, not generated)\n", dir, lines, nfiles)
	var ms []item
	for t, c := range methods {
		ms = append(ms, item{t, c})
	}
	show := func(what string, items []item, limit int) {
		sort.Slice(items, func(i, j int) bool {
			return items[i].n > items[j].n || items[i].n == items[j].n && items[i].name < items[j].name
		})
		top := "none"
		if len(items) > 0 {
			top = fmt.Sprintf("%s %d", items[0].name, items[0].n)
		}
		over := 0
		for _, it := range items {
			if it.n > limit {
				over++
			}
		}
		fmt.Printf("  %s over %d: %d (largest: %s)\n", what, limit, over, top)
		for _, it := range items {
			if it.n > limit {
				fmt.Printf("    %4d  %s\n", it.n, it.name)
			}
		}
	}
	show("structs with fields", structs, maxFields)
	show("types with methods", ms, maxMethods)
	show("functions with lines", funcs, maxLines)
	return nil
}

func recvName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return "?"
		}
	}
}
