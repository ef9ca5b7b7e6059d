package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// scanForSecretLiterals reads every YAML file under root as written (before
// kustomize) and reports secret values committed in it: a Secret with data or
// stringData, a secretGenerator with literals, or an env entry whose name looks
// secret and which carries a literal value. skip prunes folders (relative to root).
func scanForSecretLiterals(root string, skip func(rel string) bool) ([]finding, error) {
	var found []finding
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && skip(rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext != ".yaml" && ext != ".yml" {
			return nil
		}
		inFile, err := scanYAMLFile(p)
		if err != nil {
			return err
		}
		for _, f := range inFile {
			f.object = rel + ": " + f.object
			found = append(found, f)
		}
		return nil
	})
	return found, err
}

func scanYAMLFile(p string) ([]finding, error) {
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, err
	}
	var fs []finding
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(b)))
	for i := 0; ; i++ {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		var v any
		if err := yaml.Unmarshal(doc, &v); err != nil {
			return nil, fmt.Errorf("%s document %d: %w", p, i, err)
		}
		m, ok := v.(map[string]any)
		if !ok {
			continue
		}
		where := fmt.Sprintf("document %d", i)
		if m["kind"] == "Secret" && (nonEmpty(m["data"]) || nonEmpty(m["stringData"])) {
			fs = append(fs, finding{checkSecrets, where, "a Secret with literal data is committed"})
		}
		if gens, ok := m["secretGenerator"].([]any); ok {
			for _, g := range gens {
				if g, ok := g.(map[string]any); ok && nonEmpty(g["literals"]) {
					fs = append(fs, finding{checkSecrets, where, fmt.Sprintf("secretGenerator %v has literals", g["name"])})
				}
			}
		}
		walkYAML(v, func(m map[string]any) {
			name, _ := m["name"].(string)
			if _, hasValue := m["value"]; hasValue && secretish.MatchString(name) {
				fs = append(fs, finding{checkSecrets, where, "env " + name + " holds a literal value"})
			}
		})
	}
	return fs, nil
}

func nonEmpty(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return len(v) > 0
	case []any:
		return len(v) > 0
	case string:
		return v != ""
	}
	return v != nil
}

// walkYAML visits every map in v, including the documents inside inline
// kustomize patches (`patch: |-` strings).
func walkYAML(v any, visit func(map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		visit(v)
		for k, c := range v {
			if s, ok := c.(string); ok && k == "patch" {
				for doc := range strings.SplitSeq(s, "\n---\n") {
					var inner any
					if yaml.Unmarshal([]byte(doc), &inner) == nil {
						walkYAML(inner, visit)
					}
				}
				continue
			}
			walkYAML(c, visit)
		}
	case []any:
		for _, c := range v {
			walkYAML(c, visit)
		}
	}
}
