package oasdoc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gatehouse/gatehouse/pkg/jsonstrict"
	"github.com/gatehouse/gatehouse/services/management/internal/rawjson"
)

// MaxYAMLExpansion bounds the JSON a YAML document may expand to through
// aliases ("billion laughs"): four times the largest request body.
const MaxYAMLExpansion = 64 << 20

// IsYAML reports whether a media type (parameters allowed) names YAML.
func IsYAML(contentType string) bool {
	mt, _, _ := strings.Cut(contentType, ";")
	switch strings.ToLower(strings.TrimSpace(mt)) {
	case "application/x-yaml", "application/yaml", "text/yaml", "text/x-yaml":
		return true
	}
	return false
}

// YAMLToJSON converts one YAML document to JSON, keeping the order of
// mapping keys and the spelling of numbers (9007199254740993 stays exact).
// Values without a JSON equivalent (.inf, .nan, merge keys, non-scalar
// keys) and duplicate keys are errors naming the line.
// A large document is converted in pieces (yamlchunks.go; yamljson.go when
// it is JSON text); one that cannot be is converted whole, one at a time.
func YAMLToJSON(src []byte) ([]byte, error) {
	if n := yamlNodes(src); n > jsonstrict.MaxValues {
		return nil, fmt.Errorf("the YAML document holds more than %d nodes", jsonstrict.MaxValues)
	}
	if isJSONObject(src) {
		if j, ok := jsonPiecewise(src); ok {
			return j, nil
		}
	} else if j, ok := yamlPiecewise(src); ok {
		return j, nil
	}
	if len(src) > wholeCheckAlone {
		wholeChecks <- struct{}{}
		defer func() { <-wholeChecks }()
	}
	return yamlWhole(src)
}

// yamlWhole converts a YAML document through the decoder's tree of it.
func yamlWhole(src []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(src))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("the YAML document is empty")
		}
		return nil, fmt.Errorf("invalid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, errors.New("invalid YAML: want exactly one document")
	}
	w := &yamlWriter{aliasBudget: len(src) + 10000}
	if err := w.node(&root, 0); err != nil {
		return nil, err
	}
	return w.buf.Bytes(), nil
}

type yamlWriter struct {
	buf bytes.Buffer
	// aliasBudget is how many more nodes may be written through aliases:
	// about one per source byte, so that aliases cannot multiply the work
	// ("billion laughs").
	aliasBudget int
	inAlias     int
}

// maxDepth bounds nesting, aliases included.
const maxDepth = 1000

var (
	jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)
	decimalInt = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
)

// node writes one YAML node as JSON: a walker over the node kinds and tags
// of the YAML parser's tree, one case per kind and per scalar tag, so that
// the JSON it writes reads as the YAML did (cyclomatic complexity over 15
// on purpose).
func (w *yamlWriter) node(n *yaml.Node, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("invalid YAML: nesting deeper than %d", maxDepth)
	}
	if w.inAlias > 0 {
		if w.aliasBudget--; w.aliasBudget < 0 {
			return errors.New("invalid YAML: aliases expand the document too much")
		}
	}
	if w.buf.Len() > MaxYAMLExpansion {
		return fmt.Errorf("invalid YAML: the document expands to more than %d bytes", MaxYAMLExpansion)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) != 1 {
			return errors.New("the YAML document is empty")
		}
		return w.node(n.Content[0], depth+1)
	case yaml.AliasNode:
		w.inAlias++
		defer func() { w.inAlias-- }()
		return w.node(n.Alias, depth+1)
	case yaml.MappingNode:
		w.buf.WriteByte('{')
		seen := make(map[string]bool, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			for k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return fmt.Errorf("invalid YAML: line %d: a mapping key must be a scalar", k.Line)
			}
			if k.ShortTag() == "!!merge" {
				return fmt.Errorf("invalid YAML: line %d: merge keys (<<) are not supported", k.Line)
			}
			if seen[k.Value] {
				return fmt.Errorf("invalid YAML: line %d: duplicate key %q", k.Line, k.Value)
			}
			seen[k.Value] = true
			if i > 0 {
				w.buf.WriteByte(',')
			}
			w.buf.Write(rawjson.Quote(k.Value))
			w.buf.WriteByte(':')
			if err := w.node(v, depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte('}')
		return nil
	case yaml.SequenceNode:
		w.buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				w.buf.WriteByte(',')
			}
			if err := w.node(c, depth+1); err != nil {
				return err
			}
		}
		w.buf.WriteByte(']')
		return nil
	case yaml.ScalarNode:
		return w.scalar(n)
	}
	return fmt.Errorf("invalid YAML: line %d: unsupported node", n.Line)
}

func (w *yamlWriter) scalar(n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		w.buf.WriteString("null")
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return fmt.Errorf("invalid YAML: line %d: %q is not a boolean", n.Line, n.Value)
		}
		w.buf.WriteString(strconv.FormatBool(b))
	case "!!int":
		s, err := yamlInt(n.Value)
		if err != nil {
			return fmt.Errorf("invalid YAML: line %d: %q is not an integer", n.Line, n.Value)
		}
		w.buf.WriteString(s)
	case "!!float":
		v := strings.TrimPrefix(n.Value, "+")
		if jsonNumber.MatchString(v) {
			w.buf.WriteString(v)
			return nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(v, "_", ""), 64)
		if err != nil || f != f || f > 1e308 || f < -1e308 {
			return fmt.Errorf("invalid YAML: line %d: %q has no JSON equivalent", n.Line, n.Value)
		}
		w.buf.WriteString(strconv.FormatFloat(f, 'g', -1, 64))
	default: // !!str, !!timestamp, !!binary and custom tags keep their text
		w.buf.Write(rawjson.Quote(n.Value))
	}
	return nil
}

// yamlInt spells a YAML integer (decimal, 0x, 0o, 0b, underscores, sign) in JSON.
func yamlInt(v string) (string, error) {
	if decimalInt.MatchString(v) {
		return v, nil
	}
	s := strings.ReplaceAll(v, "_", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	base := 10
	switch {
	case strings.HasPrefix(s, "0x"), strings.HasPrefix(s, "0X"):
		base, s = 16, s[2:]
	case strings.HasPrefix(s, "0o"), strings.HasPrefix(s, "0O"):
		base, s = 8, s[2:]
	case strings.HasPrefix(s, "0b"), strings.HasPrefix(s, "0B"):
		base, s = 2, s[2:]
	}
	n, ok := new(big.Int).SetString(s, base)
	if !ok {
		return "", strconv.ErrSyntax
	}
	if neg {
		n.Neg(n)
	}
	return n.String(), nil
}

// yaml11Bools are plain words a YAML 1.1 reader (such as Tyk's) takes for
// booleans although YAML 1.2 does not; they are quoted so that any reader
// gets a string back.
var yaml11Bools = map[string]bool{"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "n": true, "N": true,
	"no": true, "No": true, "NO": true, "on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true}

// yamlNodes counts, without building anything, the nodes a YAML document
// holds, from above, so that a document of millions of tiny items is
// refused before the YAML decoder builds a node for each (CONTRACT §0,
// jsonstrict.MaxValues). It reads line by line, outside quotes, comments
// and block scalars: each line with content starts a node, and each
// mapping value (": " or ":" at the end), block sequence entry ("- "),
// flow collection and flow separator ("[", "{", ",") adds one.
func yamlNodes(src []byte) int {
	n := 1      // the root collection
	block := -1 // inside a block scalar: the indentation of its parent line
	for line := range bytes.Lines(src) {
		content := bytes.TrimRight(bytes.TrimLeft(line, " "), " \t\r\n")
		indent := len(line) - len(bytes.TrimLeft(line, " "))
		if block >= 0 {
			if len(content) == 0 || indent > block {
				continue
			}
			block = -1
		}
		if len(content) == 0 || content[0] == '#' {
			continue
		}
		n++
		n += lineNodes(content)
		if last := content[len(content)-1]; last == '|' || last == '>' || bytes.HasSuffix(content, []byte("|-")) ||
			bytes.HasSuffix(content, []byte(">-")) || bytes.HasSuffix(content, []byte("|+")) || bytes.HasSuffix(content, []byte(">+")) {
			block = indent
		}
	}
	return n
}

// lineNodes counts the nodes a line's indicators add, outside quotes and
// comments: a byte scanner whose state (inside quotes, after a space) the
// cases share, so it stays one loop (cyclomatic complexity over 15 on
// purpose).
func lineNodes(content []byte) int {
	n := 0
	var quote byte
	for i := 0; i < len(content); i++ {
		c := content[i]
		after := i+1 == len(content) || content[i+1] == ' '
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			if i == 0 || bytes.IndexByte([]byte(" [{,:"), content[i-1]) >= 0 {
				quote = c
			}
		case c == '#' && i > 0 && content[i-1] == ' ':
			return n
		case c == ':' && after, c == '-' && after && (i == 0 || content[i-1] == ' '), c == ',', c == '[', c == '{':
			n++
		}
	}
	return n
}
