package oasdoc

import (
	"context"

	"github.com/getkin/kin-openapi/openapi3"
)

// checkOpenAPI resolves the document's references and checks the OpenAPI
// rules, examples aside, as kin-openapi's T.Validate does. again decodes
// the document again (see resolveRefs); refs reports whether it may hold
// references (referencesIn).
func checkOpenAPI(ctx context.Context, d *openapi3.T, again func() (*openapi3.T, error), refs bool) error {
	fresh := func() (*openapi3.Components, error) {
		whole, err := again()
		if err != nil {
			return nil, err
		}
		return whole.Components, nil
	}
	if !refs {
		if err := newLoader(ctx).ResolveRefsIn(d, nil); err != nil {
			return invalid("invalid OpenAPI document: %s", err)
		}
	} else if err := resolveRefs(ctx, d, fresh, again); err != nil {
		return invalid("invalid OpenAPI document: %s", err)
	}
	if refs {
		standIn(ctx, d)
	}
	if err := validateOpenAPI(ctx, d); err != nil {
		return invalid("invalid OpenAPI document: %s", err)
	}
	return nil
}

// validateOpenAPI returns what d.Validate returns, for less. T.Validate
// checks its sections in order (components, info, paths, then the rest),
// and then walks every path item again for security requirements naming
// undeclared schemes, building a strings.Replacer per path on the way: a
// fifth of the cost of a large document. When no operation has callbacks
// and every scheme the operations' requirements name is declared, that walk
// over the paths finds nothing: the paths are then checked apart, and the
// rest of the document by T.Validate with no paths, its error coming before
// or after theirs as its section does in T.Validate.
func validateOpenAPI(ctx context.Context, d *openapi3.T) error {
	opt := openapi3.DisableExamplesValidation()
	if !d.IsOpenAPI30() || d.Paths == nil || d.Webhooks != nil || d.JSONSchemaDialect != "" ||
		(d.Components != nil && len(d.Components.Callbacks) != 0) || !pathsWalkFindsNothing(d) {
		return d.Validate(ctx, opt)
	}
	rest := *d
	rest.Paths = openapi3.NewPaths()
	restErr := rest.Validate(ctx, opt)
	if s, ok := restErr.(*openapi3.SectionValidationError); ok && (s.Section == "components" || s.Section == "info") {
		return restErr
	}
	if err := d.Paths.Validate(openapi3.WithValidationOptions(ctx, opt)); err != nil {
		return &openapi3.SectionValidationError{Section: "paths", Cause: err}
	}
	return restErr
}

// pathsWalkFindsNothing reports whether T.Validate's walk over the paths
// would find nothing: no operation has callbacks, and every scheme named by
// an operation's security requirements is declared.
func pathsWalkFindsNothing(d *openapi3.T) bool {
	var schemes openapi3.SecuritySchemes
	if d.Components != nil {
		schemes = d.Components.SecuritySchemes
	}
	for _, item := range d.Paths.Map() {
		if !itemWalkFindsNothing(item, schemes) {
			return false
		}
	}
	return true
}

// itemWalkFindsNothing is pathsWalkFindsNothing for one path item, whose
// document declares schemes.
func itemWalkFindsNothing(item *openapi3.PathItem, schemes openapi3.SecuritySchemes) bool {
	if item == nil {
		return true
	}
	for _, op := range []*openapi3.Operation{item.Connect, item.Delete, item.Get, item.Head, item.Options, item.Patch, item.Post, item.Put, item.Trace, item.Query} {
		if !walkFindsNothing(op, schemes) {
			return false
		}
	}
	for _, op := range item.AdditionalOperations {
		if !walkFindsNothing(op, schemes) {
			return false
		}
	}
	return true
}

// walkFindsNothing reports whether op has no callbacks and names only
// schemes among schemes in its security requirements.
func walkFindsNothing(op *openapi3.Operation, schemes openapi3.SecuritySchemes) bool {
	if op == nil {
		return true
	}
	if len(op.Callbacks) != 0 {
		return false
	}
	if op.Security != nil {
		for _, requirement := range *op.Security {
			for name := range requirement {
				if _, declared := schemes[name]; !declared {
					return false
				}
			}
		}
	}
	return true
}
