package oasdoc

// The document shapes of the intake benchmarks, for the external test
// package (intake_test.go), which runs the intake through the record maker.
var (
	SmallPaths        = smallPaths
	ManyOperations    = manyOperations
	Large             = large
	ReferencedSchemas = referencedSchemas
	CallbackPaths     = callbackPaths
	PathRefs          = pathRefs
	EncodedRefs       = encodedRefs
	IntoComponents    = intoComponents
	IntoPaths         = intoPaths
	FallbackShapes    = fallbackShapes
	FallbackShape     = fallbackShape
)
