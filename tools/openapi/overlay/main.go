// Command overlay applies proto/openapi-overlay.json to the descriptions
// protoc-gen-openapiv2 writes (make generate runs it after buf generate).
//
// The generator cannot say some things the REST facade does: a schema's
// additionalProperties, an array's item type, or a different body per
// operation when the proto type is google.api.HttpBody. The overlay states
// them as JSON Patch operations (RFC 6902: add, replace, remove) per file,
// so every change to a generated description is written down in one
// reviewed place. "replace" and "remove" fail when their target is missing,
// so a generator change that moves a schema is noticed.
//
// Usage: overlay <overlay.json> <dir holding the generated files>
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// op is one JSON Patch operation.
type op struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: overlay <overlay.json> <dir>")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "overlay:", err)
		os.Exit(1)
	}
}

func run(overlayPath, dir string) error {
	raw, err := os.ReadFile(overlayPath)
	if err != nil {
		return err
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return fmt.Errorf("%s: %w", overlayPath, err)
	}
	files := map[string][]op{}
	names := make([]string, 0, len(members))
	for name, ops := range members {
		if strings.HasPrefix(name, "//") { // "//..." members are comments
			continue
		}
		var list []op
		if err := json.Unmarshal(ops, &list); err != nil {
			return fmt.Errorf("%s: %s: %w", overlayPath, name, err)
		}
		files[name] = list
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		path := filepath.Join(dir, filepath.FromSlash(name))
		doc, err := readJSON(path)
		if err != nil {
			return err
		}
		for i, o := range files[name] {
			if doc, err = apply(doc, o); err != nil {
				return fmt.Errorf("%s: operation %d (%s %s): %w", name, i, o.Op, o.Path, err)
			}
		}
		if err := writeJSON(path, doc); err != nil {
			return err
		}
	}
	return nil
}

func readJSON(path string) (any, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// writeJSON writes v with two-space indentation, keys sorted, no HTML escaping.
func writeJSON(path string, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}

// apply runs one operation on doc and returns the new document.
func apply(doc any, o op) (any, error) {
	tokens, err := pointer(o.Path)
	if err != nil {
		return nil, err
	}
	var value any
	if o.Op != "remove" {
		dec := json.NewDecoder(bytes.NewReader(o.Value))
		dec.UseNumber()
		if err := dec.Decode(&value); err != nil {
			return nil, fmt.Errorf("value: %w", err)
		}
	}
	if len(tokens) == 0 {
		return nil, fmt.Errorf("the whole document cannot be patched")
	}
	parent, err := walk(doc, tokens[:len(tokens)-1])
	if err != nil {
		return nil, err
	}
	last := tokens[len(tokens)-1]
	switch p := parent.(type) {
	case map[string]any:
		_, exists := p[last]
		switch {
		case o.Op == "add":
			p[last] = value
		case !exists:
			return nil, fmt.Errorf("no member %q to %s", last, o.Op)
		case o.Op == "replace":
			p[last] = value
		case o.Op == "remove":
			delete(p, last)
		default:
			return nil, fmt.Errorf("unknown op %q", o.Op)
		}
		return doc, nil
	case []any:
		if o.Op == "add" && last == "-" {
			return setAt(doc, tokens[:len(tokens)-1], append(p, value))
		}
		i, err := strconv.Atoi(last)
		if err != nil || i < 0 || i >= len(p) {
			return nil, fmt.Errorf("no element %q", last)
		}
		switch o.Op {
		case "replace":
			p[i] = value
			return doc, nil
		case "remove":
			return setAt(doc, tokens[:len(tokens)-1], append(p[:i:i], p[i+1:]...))
		}
		return nil, fmt.Errorf("%s at an array index is not supported", o.Op)
	}
	return nil, fmt.Errorf("parent of %q is not an object or array", last)
}

// setAt replaces the value at tokens (an array that grew or shrank).
func setAt(doc any, tokens []string, v any) (any, error) {
	if len(tokens) == 0 {
		return v, nil
	}
	parent, err := walk(doc, tokens[:len(tokens)-1])
	if err != nil {
		return nil, err
	}
	last := tokens[len(tokens)-1]
	switch p := parent.(type) {
	case map[string]any:
		p[last] = v
	case []any:
		i, _ := strconv.Atoi(last)
		p[i] = v
	}
	return doc, nil
}

// walk follows tokens from doc.
func walk(doc any, tokens []string) (any, error) {
	cur := doc
	for _, t := range tokens {
		switch c := cur.(type) {
		case map[string]any:
			next, ok := c[t]
			if !ok {
				return nil, fmt.Errorf("no member %q", t)
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(t)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("no element %q", t)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%q: not an object or array", t)
		}
	}
	return cur, nil
}

// pointer splits an RFC 6901 JSON pointer into unescaped tokens.
func pointer(p string) ([]string, error) {
	if p == "" {
		return nil, nil
	}
	if !strings.HasPrefix(p, "/") {
		return nil, fmt.Errorf("pointer %q does not start with /", p)
	}
	parts := strings.Split(p[1:], "/")
	for i, s := range parts {
		parts[i] = strings.ReplaceAll(strings.ReplaceAll(s, "~1", "/"), "~0", "~")
	}
	return parts, nil
}
