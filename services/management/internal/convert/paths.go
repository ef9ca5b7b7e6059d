package convert

import (
	"encoding/json"
	"fmt"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Paths and operations: every classic endpoint entry (extended_paths of the target's version) becomes an
// OpenAPI operation, identified by Tyk's operationId rule (the raw classic path without its leading slash,
// followed by the method: "/orders/[0-9]+" GET → "orders/[0-9]+GET"), and its settings become that
// operation's entry in x-tyk-api-gateway.middleware.operations.

// pathItem is an OpenAPI path item; fields are in alphabetical order, as Tyk writes them.
type pathItem struct {
	Delete     *operation  `json:"delete,omitempty"`
	Get        *operation  `json:"get,omitempty"`
	Head       *operation  `json:"head,omitempty"`
	Options    *operation  `json:"options,omitempty"`
	Parameters []parameter `json:"parameters,omitempty"`
	Patch      *operation  `json:"patch,omitempty"`
	Post       *operation  `json:"post,omitempty"`
	Put        *operation  `json:"put,omitempty"`
	Trace      *operation  `json:"trace,omitempty"`
}

// operation returns the slot of a method (one of httpMethods).
func (p *pathItem) operation(method string) **operation {
	switch method {
	case "GET":
		return &p.Get
	case "PUT":
		return &p.Put
	case "POST":
		return &p.Post
	case "DELETE":
		return &p.Delete
	case "OPTIONS":
		return &p.Options
	case "HEAD":
		return &p.Head
	case "PATCH":
		return &p.Patch
	case "TRACE":
		return &p.Trace
	}
	panic("convert: unsupported method " + method) // endpoint() admits only httpMethods
}

type operation struct {
	OperationID string       `json:"operationId"`
	RequestBody *requestBody `json:"requestBody,omitempty"`
	Responses   responses    `json:"responses"`

	x         *opState  // its middleware while the document is built; nil until a setting is merged
	bodySetBy string    // the classic path whose validate_json set RequestBody
	keys      [1]string // the first response key, without an allocation of its own
}

// responses are the response keys of an operation ("default" or status codes), in the order encoding a map
// gives (sorted), each with an empty description: {"200":{"description":""}}. A sorted slice costs one small
// allocation where a map cost a table per operation.
type responses []string

// set adds a key, keeping the order.
func (r *responses) set(key string) {
	i, found := slices.BinarySearch(*r, key)
	if !found {
		*r = slices.Insert(*r, i, key)
	}
}

// remove drops a key.
func (r *responses) remove(key string) {
	if i, found := slices.BinarySearch(*r, key); found {
		*r = slices.Delete(*r, i, i+1)
	}
}

// defaultResponse is the responses of most operations, written once.
var defaultResponse = []byte(`{"default":{"description":""}}`)

// MarshalJSON writes the keys as an object of empty-description responses.
func (r responses) MarshalJSON() ([]byte, error) {
	if len(r) == 1 && r[0] == "default" {
		return defaultResponse, nil // the encoder copies it
	}
	out := make([]byte, 0, 2+len(r)*32)
	out = append(out, '{')
	for i, k := range r {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendQuote(out, k)
		out = append(out, `:{"description":""}`...)
	}
	return append(out, '}'), nil
}

// UnmarshalJSON reads the keys of a responses object, for ToClassic.
func (r *responses) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	*r = sortedKeys(m)
	return nil
}

type requestBody struct {
	Content map[string]mediaType `json:"content"`
	// Required is set for validate_json: classic refuses a request without a body (400 "JSON parsing error:
	// EOF"); an optional request body would let it through to the upstream.
	Required bool `json:"required,omitempty"`
}

type mediaType struct {
	Schema map[string]any `json:"schema"`
}

type parameter struct {
	In       string      `json:"in"`
	Name     string      `json:"name"`
	Required bool        `json:"required"`
	Schema   paramSchema `json:"schema"`
	regex    string      // the classic segment's regular expression, if it had one
}

type paramSchema struct {
	Pattern string `json:"pattern,omitempty"`
	Type    string `json:"type"`
}

// templated is a classic path in OpenAPI form.
type templated struct {
	path   string
	params []parameter
}

// literalSegment reports whether a path segment is literal text: ^[a-zA-Z0-9._-]+$.
func literalSegment(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// templatePath turns a classic path (a regular expression, possibly with {name} or {name:regex} segments)
// into an OpenAPI path template: literal segments stay, {name} and {name:regex} become {name} (the regex is
// dropped, as Tyk does), and any other segment becomes {customRegexN} with the segment as its pattern.
// A trailing slash is kept.
func templatePath(raw string) (*templated, error) {
	trimmed := strings.Trim(raw, "/")
	if trimmed == "" {
		return &templated{path: "/"}, nil
	}
	if literalPath(raw) {
		return &templated{path: raw}, nil // what buildTemplate would build, without building it
	}
	return buildTemplate(raw, trimmed)
}

// buildTemplate is templatePath's work on raw, whose slashes trimmed has trimmed and is not empty.
func buildTemplate(raw, trimmed string) (*templated, error) {
	var b strings.Builder
	b.Grow(len(raw) + 16)
	var params []parameter
	n := 0
	for rest := trimmed; rest != ""; {
		seg, after, _ := strings.Cut(rest, "/")
		rest = after
		if seg == "" {
			continue
		}
		b.WriteByte('/')
		if literalSegment(seg) {
			b.WriteString(seg)
			continue
		}
		var p parameter
		if len(seg) >= 2 && seg[0] == '{' && seg[len(seg)-1] == '}' {
			name, regex, _ := strings.Cut(seg[1:len(seg)-1], ":")
			if !literalSegment(name) {
				n++
				name = "customRegex" + strconv.Itoa(n)
			}
			p = parameter{In: "path", Name: name, Required: true, Schema: paramSchema{Type: "string"}, regex: regex}
		} else {
			if err := checkRegex(seg); err != nil {
				return nil, fmt.Errorf("path segment %q is not a valid regular expression: %v", seg, err)
			}
			n++
			p = parameter{In: "path", Name: "customRegex" + strconv.Itoa(n), Required: true, Schema: paramSchema{Type: "string", Pattern: seg}, regex: seg}
		}
		for _, q := range params {
			if q.Name == p.Name {
				return nil, fmt.Errorf("more than one path parameter is named %q", p.Name)
			}
		}
		params = append(params, p)
		b.WriteByte('{')
		b.WriteString(p.Name)
		b.WriteByte('}')
	}
	if b.Len() == 0 {
		b.WriteByte('/')
	} else if strings.HasSuffix(raw, "/") {
		b.WriteByte('/')
	}
	return &templated{path: b.String(), params: params}, nil
}

// literalPath reports whether templatePath keeps raw as it is: a leading slash, then literal segments
// separated by single slashes, with at most one trailing slash.
func literalPath(raw string) bool {
	if raw == "" || raw[0] != '/' {
		return false
	}
	rest := strings.TrimSuffix(raw[1:], "/")
	for rest != "" {
		seg, after, found := strings.Cut(rest, "/")
		if !literalSegment(seg) || (found && after == "") {
			return false
		}
		rest = after
	}
	return true
}

// validRegexes remembers path segments that parse as regular expressions: APIs share a few patterns, and
// parsing one costs more than the rest of its path. The set is bounded; once full, segments are parsed again.
var validRegexes struct {
	sync.Mutex
	set map[string]bool
}

const maxValidRegexes = 4096

// checkRegex reports whether seg is a valid regular expression (Perl syntax), as syntax.Parse does.
func checkRegex(seg string) error {
	validRegexes.Lock()
	known := validRegexes.set[seg]
	validRegexes.Unlock()
	if known {
		return nil
	}
	if _, err := syntax.Parse(seg, syntax.Perl); err != nil {
		return err
	}
	validRegexes.Lock()
	if validRegexes.set == nil {
		validRegexes.set = make(map[string]bool)
	}
	if len(validRegexes.set) < maxValidRegexes {
		validRegexes.set[strings.Clone(seg)] = true
	}
	validRegexes.Unlock()
	return nil
}

func validMethod(m string) bool {
	for _, h := range httpMethods {
		if h == m {
			return true
		}
	}
	return false
}
