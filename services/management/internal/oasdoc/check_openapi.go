package oasdoc

import (
	"context"

	"github.com/getkin/kin-openapi/openapi3"
)

// checkOpenAPI resolves the document's references and checks the OpenAPI
// rules, examples aside, as kin-openapi's T.Validate does.
func checkOpenAPI(ctx context.Context, d *openapi3.T) error {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	loader.Context = ctx
	if err := loader.ResolveRefsIn(d, nil); err != nil {
		return invalid("invalid OpenAPI document: %s", err)
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
// fifth of the cost of a large document. When no operation has security
// requirements or callbacks, that walk over the paths finds nothing: the
// paths are then checked apart, and the rest of the document by T.Validate
// with no paths, its error coming before or after theirs as its section
// does in T.Validate.
func validateOpenAPI(ctx context.Context, d *openapi3.T) error {
	opt := openapi3.DisableExamplesValidation()
	if !d.IsOpenAPI30() || d.Paths == nil || d.Webhooks != nil || d.JSONSchemaDialect != "" ||
		(d.Components != nil && len(d.Components.Callbacks) != 0) || securityInPaths(d.Paths) {
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

// securityInPaths reports whether an operation has security requirements
// or callbacks: what T.Validate's walk over the paths looks at.
func securityInPaths(paths *openapi3.Paths) bool {
	for _, item := range paths.Map() {
		if item == nil {
			continue
		}
		for _, op := range []*openapi3.Operation{item.Connect, item.Delete, item.Get, item.Head, item.Options, item.Patch, item.Post, item.Put, item.Trace, item.Query} {
			if op != nil && (op.Security != nil || len(op.Callbacks) != 0) {
				return true
			}
		}
		for _, op := range item.AdditionalOperations {
			if op != nil && (op.Security != nil || len(op.Callbacks) != 0) {
				return true
			}
		}
	}
	return false
}
