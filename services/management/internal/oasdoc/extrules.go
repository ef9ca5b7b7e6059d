package oasdoc

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The constraints of the x-tyk-api-gateway JSON schema (draft-04, Tyk's apidef/oas/schema), restated as the
// project's own tables: the members each object requires, the type, enum, pattern or range of each value, and
// the schema's conditional rules (extcheck.go). The schema has no additionalProperties: false, so that is all it
// constrains. testdata/x-tyk-api-gateway.schema.json states the same facts as a JSON schema, and the package's
// tests hold Check to it.

// extRequired lists, for each object of the parts restated (those the converter writes; a location under
// x-tyk-api-gateway, "*" for any key or index, a leading "**" for any depth), the members the schema requires.
var extRequired = []struct {
	at      string
	members []string
}{
	{"", []string{"info", "upstream", "server"}},
	{"info", []string{"name", "state"}},
	{"info.state", []string{"active"}},
	{"info.versioning", []string{"location"}},
	{"info.versioning.versions.*", []string{"name", "id"}},

	{"upstream.serviceDiscovery", []string{"enabled"}},
	{"upstream.serviceDiscovery.cache", []string{"enabled"}},
	{"upstream.uptimeTests", []string{"enabled"}},
	{"upstream.uptimeTests.serviceDiscovery", []string{"enabled"}},
	{"upstream.uptimeTests.serviceDiscovery.cache", []string{"enabled"}},
	{"upstream.mutualTLS", []string{"enabled", "domainToCertificateMapping"}},
	{"upstream.mutualTLS.domainToCertificateMapping.*", []string{"domain", "certificate"}},
	{"upstream.certificatePinning", []string{"enabled", "domainToPublicKeysMapping"}},
	{"upstream.rateLimit", []string{"enabled", "rate", "per"}},
	{"upstream.authentication", []string{"enabled"}},
	{"upstream.authentication.basicAuth", []string{"enabled", "username", "password"}},
	{"upstream.authentication.basicAuth.header", []string{"enabled"}},
	{"upstream.authentication.oauth", []string{"enabled", "allowedAuthorizeTypes"}},
	{"upstream.authentication.oauth.*.header", []string{"enabled"}},
	{"upstream.authentication.requestSigning", []string{"enabled"}},
	{"upstream.loadBalancing", []string{"enabled"}},
	{"upstream.loadBalancing.targets.*", []string{"url", "weight"}},
	{"upstream.preserveHostHeader", []string{"enabled"}},
	{"upstream.preserveTrailingSlash", []string{"enabled"}},
	{"upstream.proxy", []string{"enabled"}},

	{"server", []string{"listenPath"}},
	{"server.listenPath", []string{"value"}},
	{"server.authentication", []string{"enabled"}},
	{"server.authentication.securitySchemes.*", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.header", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.query", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.cookie", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.signatureValidation", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.signatureValidation.query", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.extractCredentialsFromBody", []string{"enabled"}},
	{"server.authentication.securitySchemes.*.providers.*.jwt", []string{"enabled", "signingMethod", "source"}},
	{"server.authentication.securitySchemes.*.providers.*.introspection.cache", []string{"enabled", "timeout"}},
	{"server.authentication.hmac", []string{"enabled"}},
	{"server.authentication.oidc", []string{"enabled"}},
	{"server.authentication.custom", []string{"enabled"}},
	{"server.authentication.custom.config", []string{"enabled", "functionName"}},
	{"server.authentication.custom.config.idExtractor", []string{"enabled", "source", "with", "config"}},
	{"server.authentication.*.header", []string{"enabled"}},
	{"server.authentication.*.query", []string{"enabled"}},
	{"server.authentication.*.cookie", []string{"enabled"}},
	{"server.gatewayTags", []string{"enabled", "tags"}},
	{"server.customDomain", []string{"enabled", "name"}},
	{"server.detailedActivityLogs", []string{"enabled"}},
	{"server.detailedTracing", []string{"enabled"}},
	{"server.batchProcessing", []string{"enabled"}},

	{"middleware.global.pluginConfig.bundle", []string{"enabled", "path"}},
	{"middleware.global.pluginConfig.data", []string{"enabled", "value"}},
	{"middleware.global.cors", []string{"enabled"}},
	{"middleware.global.prePlugins.*", []string{"enabled", "functionName"}},
	{"middleware.global.postAuthenticationPlugins.*", []string{"enabled", "functionName"}},
	{"middleware.global.postPlugins.*", []string{"enabled", "functionName"}},
	{"middleware.global.responsePlugins.*", []string{"enabled", "functionName"}},
	{"middleware.global.transformRequestHeaders", []string{"enabled"}},
	{"middleware.global.transformResponseHeaders", []string{"enabled"}},
	{"middleware.global.*.add.*", []string{"name", "value"}},
	{"middleware.global.contextVariables", []string{"enabled"}},
	{"middleware.global.trafficLogs", []string{"enabled"}},
	{"middleware.global.trafficLogs.plugins.*", []string{"enabled"}},
	{"middleware.global.requestSizeLimit", []string{"enabled", "value"}},
	{"middleware.global.ignoreCase", []string{"enabled"}},

	{"middleware.operations.*.allow", []string{"enabled"}},
	{"middleware.operations.*.block", []string{"enabled"}},
	{"middleware.operations.*.ignoreAuthentication", []string{"enabled"}},
	{"middleware.operations.*.internal", []string{"enabled"}},
	{"middleware.operations.*.transformRequestMethod", []string{"enabled", "toMethod"}},
	{"middleware.operations.*.transformRequestBody", []string{"enabled", "format"}},
	{"middleware.operations.*.transformResponseBody", []string{"enabled", "format"}},
	{"middleware.operations.*.transformRequestHeaders", []string{"enabled"}},
	{"middleware.operations.*.transformResponseHeaders", []string{"enabled"}},
	{"middleware.operations.*.*.add.*", []string{"name", "value"}},
	{"middleware.operations.*.urlRewrite", []string{"enabled", "pattern", "rewriteTo"}},
	{"middleware.operations.*.urlRewrite.triggers.*", []string{"condition", "rewriteTo"}},
	{"middleware.operations.*.urlRewrite.triggers.*.rules.*", []string{"in", "pattern"}},
	{"middleware.operations.*.cache", []string{"enabled"}},
	{"middleware.operations.*.enforceTimeout", []string{"enabled"}},
	{"middleware.operations.*.validateRequest", []string{"enabled"}},
	{"middleware.operations.*.mockResponse", []string{"enabled"}},
	{"middleware.operations.*.mockResponse.headers.*", []string{"name", "value"}},
	{"middleware.operations.*.virtualEndpoint", []string{"enabled", "functionName"}},
	{"middleware.operations.*.postPlugins.*", []string{"enabled", "functionName", "path"}},
	{"middleware.operations.*.circuitBreaker", []string{"enabled", "threshold", "sampleSize", "coolDownPeriod", "halfOpenStateEnabled"}},
	{"middleware.operations.*.trackEndpoint", []string{"enabled"}},
	{"middleware.operations.*.doNotTrackEndpoint", []string{"enabled"}},
	{"middleware.operations.*.requestSizeLimit", []string{"enabled", "value"}},
	{"middleware.operations.*.rateLimit", []string{"enabled", "rate", "per"}},
}

// extValue is a constraint on the values at a location.
type extValue struct {
	at    string
	check valueCheck
}

// valueCheck is one constraint on a value: the check, and the same constraint as a JSON schema (draft-04),
// from which the package's tests write testdata/x-tyk-api-gateway.schema.json.
type valueCheck struct {
	check  func(v any) string // "" when the value is acceptable, else what is wrong
	schema map[string]any
}

var (
	hmsDuration     = regexp.MustCompile(`^(\d+h)?(\d+m)?(\d+s)?$`)
	domainDef       = regexp.MustCompile(`^([*a-zA-Z0-9-]+(\.[*a-zA-Z0-9-]+)*)(:\d+)?$`)
	timeoutDuration = regexp.MustCompile(`^(\d+(?:\.\d+)?m)?(\d+(?:\.\d+)?s)?(\d+(?:\.\d+)?ms)?$`)
)

var isBool = valueCheck{func(v any) string {
	if _, ok := v.(bool); !ok {
		return "must be a boolean"
	}
	return ""
}, map[string]any{"type": "boolean"}}

var isString = valueCheck{func(v any) string {
	if _, ok := v.(string); !ok {
		return "must be a string"
	}
	return ""
}, map[string]any{"type": "string"}}

// nonBlankString is the schema's "pattern": "\S+".
var nonBlankString = valueCheck{func(v any) string {
	if s, ok := v.(string); !ok || strings.TrimSpace(s) == "" {
		return "must be a string with a non-space character"
	}
	return ""
}, map[string]any{"type": "string", "pattern": `\S+`}}

func matches(re *regexp.Regexp) valueCheck {
	return valueCheck{func(v any) string {
		if s, ok := v.(string); !ok || !re.MatchString(s) {
			return "must match " + re.String()
		}
		return ""
	}, map[string]any{"type": "string", "pattern": re.String()}}
}

func oneOf(values ...string) valueCheck {
	return valueCheck{func(v any) string {
		if s, ok := v.(string); !ok || !slices.Contains(values, s) {
			return fmt.Sprintf("must be one of %q", values)
		}
		return ""
	}, map[string]any{"type": "string", "enum": values}}
}

// numberIn checks a JSON number, optionally an integer, against inclusive bounds.
func numberIn(integer bool, lo, hi float64) valueCheck {
	kind := "number"
	if integer {
		kind = "integer"
	}
	return valueCheck{func(v any) string {
		f, ok := numberValue(v)
		if !ok || (integer && f != float64(int64(f))) || f < lo || f > hi {
			return fmt.Sprintf("must be a %s in [%v, %v]", kind, lo, hi)
		}
		return ""
	}, map[string]any{"type": kind, "minimum": lo, "maximum": hi}}
}

func numberValue(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case interface{ Float64() (float64, error) }:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func isArrayOf(item valueCheck) valueCheck {
	return valueCheck{func(v any) string {
		list, ok := v.([]any)
		if !ok {
			return "must be an array"
		}
		for i, e := range list {
			if p := item.check(e); p != "" {
				return fmt.Sprintf("item %d %s", i, p)
			}
		}
		return ""
	}, map[string]any{"type": "array", "items": item.schema}}
}

func orNull(c valueCheck) valueCheck {
	return valueCheck{func(v any) string {
		if v == nil {
			return ""
		}
		return c.check(v)
	}, map[string]any{"anyOf": []any{map[string]any{"type": "null"}, c.schema}}}
}

var uniqueStrings = valueCheck{func(v any) string {
	list, ok := v.([]any)
	if !ok {
		return "must be an array"
	}
	for i, e := range list {
		if _, ok := e.(string); !ok || slices.Contains(list[:i], e) {
			return "must hold unique strings"
		}
	}
	return ""
}, map[string]any{"type": "array", "items": map[string]any{"type": "string"}, "uniqueItems": true}}

const maxFloat = 1e308

var (
	anyInt     = numberIn(true, -maxFloat, maxFloat)
	nonNegInt  = numberIn(true, 0, maxFloat)
	anyNumber  = numberIn(false, -maxFloat, maxFloat)
	tlsVersion = oneOf("1.0", "1.1", "1.2", "1.3")
)

var extValues = []extValue{
	{"**.enabled", isBool},
	// members the schema types as booleans wherever they appear
	{"info.state.active", isBool},
	{"info.state.internal", isBool},
	{"info.versioning.stripVersioningData", isBool},
	{"info.versioning.fallbackToDefault", isBool},
	{"server.listenPath.strip", isBool},
	{"server.authentication.stripAuthorizationData", isBool},
	{"server.authentication.securitySchemes.*.enableClientCertificate", isBool},
	{"server.authentication.securitySchemes.*.skipKid", isBool},
	{"server.authentication.securitySchemes.*.refreshToken", isBool},
	{"middleware.operations.*.*.ignoreCase", isBool},
	{"**.negate", isBool},
	{"**.rawBodyOnly", isBool},
	{"**.requireSession", isBool},
	{"**.proxyOnError", isBool},
	{"**.allowCredentials", isBool},
	{"**.optionsPassthrough", isBool},
	{"**.cacheAllSafeRequests", isBool},
	{"**.enableUpstreamCacheControl", isBool},
	{"info.name", nonBlankString},
	{"info.id", isString},
	{"info.versioning.name", nonBlankString},
	{"info.versioning.default", isString},
	{"info.versioning.location", nonBlankString},
	{"info.versioning.key", nonBlankString},
	{"info.versioning.versions.*.name", nonBlankString},
	{"info.versioning.versions.*.id", nonBlankString},

	{"upstream.url", isString},
	{"upstream.serviceDiscovery.cacheTimeout", anyInt},
	{"upstream.serviceDiscovery.cache.timeout", anyInt},
	{"upstream.rateLimit.rate", anyNumber},
	{"upstream.rateLimit.per", matches(hmsDuration)},
	{"upstream.authentication.basicAuth.username", nonBlankString},
	{"upstream.authentication.basicAuth.password", nonBlankString},
	{"upstream.authentication.oauth.allowedAuthorizeTypes", orNull(isArrayOf(oneOf("clientCredentials", "password")))},
	{"upstream.mutualTLS.domainToCertificateMapping.*.domain", matches(domainDef)},
	{"upstream.loadBalancing.targets.*.url", isString},
	{"upstream.loadBalancing.targets.*.weight", anyNumber},
	{"upstream.tlsTransport.minVersion", tlsVersion},
	{"upstream.tlsTransport.maxVersion", tlsVersion},

	{"server.listenPath.value", nonBlankString},
	{"server.port", numberIn(true, 1, 65535)},
	{"server.protocol", oneOf("http", "https", "h2c")},
	{"server.gatewayTags.tags", uniqueStrings},
	{"server.customDomain.name", isString},
	{"server.authentication.baseIdentityProvider", oneOf("auth_token", "hmac_key", "basic_auth_user", "jwt_claim", "oidc_user", "oauth_key", "custom_auth", "")},
	{"server.authentication.securitySchemes.*.issuedAtValidationSkew", nonNegInt},
	{"server.authentication.securitySchemes.*.notBeforeValidationSkew", nonNegInt},
	{"server.authentication.securitySchemes.*.expiresAtValidationSkew", nonNegInt},
	{"server.authentication.securitySchemes.*.allowedAuthorizeTypes", isArrayOf(oneOf("code", "token"))},
	{"server.authentication.securitySchemes.*.signatureValidation.allowedClockSkew", anyInt},
	{"server.authentication.securitySchemes.*.providers.*.jwt.signingMethod", isString},
	{"server.authentication.securitySchemes.*.providers.*.jwt.source", isString},
	{"server.authentication.securitySchemes.*.providers.*.introspection.cache.timeout", anyInt},
	{"server.authentication.hmac.allowedClockSkew", anyNumber},
	{"server.authentication.custom.config.functionName", isString},
	{"server.authentication.custom.config.idExtractor.source", oneOf("body", "header", "form")},
	{"server.authentication.custom.config.idExtractor.with", oneOf("value", "xpath", "regex")},
	{"server.eventHandlers.*.trigger", oneOf("QuotaExceeded", "RatelimitExceeded", "RateLimitSmoothingUp", "RateLimitSmoothingDown",
		"AuthFailure", "UpstreamOAuthError", "KeyExpired", "VersionFailure", "OrgQuotaExceeded", "OrgRateLimitExceeded", "TriggerExceeded",
		"BreakerTriggered", "BreakerTripped", "BreakerReset", "HostDown", "HostUp", "TokenCreated", "TokenUpdated", "TokenDeleted",
		"CertificateExpiringSoon", "CertificateExpired")},
	{"server.eventHandlers.*.type", oneOf("webhook", "custom", "log")},
	{"server.eventHandlers.*.method", oneOf("GET", "PUT", "POST", "DELETE", "PATCH")},
	{"server.eventHandlers.*.cooldownPeriod", matches(hmsDuration)},

	{"middleware.global.pluginConfig.driver", oneOf("otto", "python", "lua", "grpc", "goplugin", "javascript")},
	{"middleware.global.pluginConfig.bundle.path", nonBlankString},
	{"middleware.global.*.*.functionName", isString},
	{"middleware.global.cache.timeout", anyInt},
	{"middleware.global.trafficLogs.customRetentionPeriod", matches(hmsDuration)},
	{"middleware.global.trafficLogs.tagHeaders", isArrayOf(isString)},
	{"middleware.global.requestSizeLimit.value", anyInt},
	{"middleware.global.skipRateLimit", isBool},
	{"middleware.global.skipQuota", isBool},
	{"middleware.global.skipQuotaReset", isBool},

	{"middleware.operations.*.transformRequestMethod.toMethod", isString},
	{"middleware.operations.*.transformRequestBody.format", oneOf("json", "xml")},
	{"middleware.operations.*.transformResponseBody.format", oneOf("json", "xml")},
	{"middleware.operations.*.*.add.*.name", isString},
	{"middleware.operations.*.*.add.*.value", isString},
	{"middleware.operations.*.urlRewrite.pattern", isString},
	{"middleware.operations.*.urlRewrite.rewriteTo", isString},
	{"middleware.operations.*.urlRewrite.triggers.*.condition", oneOf("any", "all")},
	{"middleware.operations.*.urlRewrite.triggers.*.rules.*.in", oneOf("query", "path", "header", "sessionMetadata", "requestContext", "requestBody")},
	{"middleware.operations.*.urlRewrite.triggers.*.rules.*.pattern", isString},
	{"middleware.operations.*.cache.timeout", nonNegInt},
	{"middleware.operations.*.enforceTimeout.value", nonNegInt},
	{"middleware.operations.*.enforceTimeout.duration", matches(timeoutDuration)},
	{"middleware.operations.*.requestSizeLimit.value", nonNegInt},
	{"middleware.operations.*.virtualEndpoint.functionName", isString},
	{"middleware.operations.*.postPlugins.*.functionName", isString},
	{"middleware.operations.*.postPlugins.*.path", isString},
	{"middleware.operations.*.circuitBreaker.threshold", numberIn(false, 0, 1)},
	{"middleware.operations.*.circuitBreaker.sampleSize", nonNegInt},
	{"middleware.operations.*.circuitBreaker.coolDownPeriod", nonNegInt},
	{"middleware.operations.*.circuitBreaker.halfOpenStateEnabled", isBool},
	{"middleware.operations.*.rateLimit.rate", anyNumber},
	{"middleware.operations.*.rateLimit.per", matches(hmsDuration)},
}

// extConditional are the schema's conditional rules (its anyOf and not), each at the objects of a location:
// the check, and the same rule as a JSON schema.
var extConditional = []struct {
	at     string
	check  func(obj map[string]any) string
	schema map[string]any
}{
	{"upstream", func(o map[string]any) string {
		if !has(o, "url") && !has(o, "loadBalancing") {
			return "needs url or loadBalancing"
		}
		return ""
	}, anyOf(required("url"), required("loadBalancing"))},
	{"upstream.loadBalancing", func(o map[string]any) string {
		if t, _ := o["targets"].([]any); o["enabled"] == true && len(t) == 0 {
			return "enabled needs at least one target"
		}
		return ""
	}, anyOf(not(is("enabled", true)), map[string]any{"required": []any{"targets"}, "properties": map[string]any{"targets": map[string]any{"type": "array", "minItems": 1}}})},
	{"info.versioning", func(o map[string]any) string {
		switch o["location"] {
		case "header", "url-param":
			if !has(o, "key") {
				return "location header or url-param needs a key"
			}
		case "url":
		default:
			return fmt.Sprintf("location %v is not header, url-param or url", o["location"])
		}
		return ""
	}, anyOf(is("location", "url"), allOf(is("location", "header", "url-param"), required("key")))},
	{"middleware.operations.*.transformRequestBody", needsBodyOrPath, anyOf(required("body"), required("path"))},
	{"middleware.operations.*.transformResponseBody", needsBodyOrPath, anyOf(required("body"), required("path"))},
	{"middleware.operations.*.urlRewrite.triggers.*.rules.*", func(o map[string]any) string {
		if o["in"] != "requestBody" && !has(o, "name") {
			return "a rule on anything but the request body needs a name"
		}
		return ""
	}, anyOf(is("in", "requestBody"), required("name"))},
	{"server.eventHandlers.*", func(o map[string]any) string {
		for _, m := range eventHandlerNeeds(o) {
			if !has(o, m) {
				return fmt.Sprintf("a %v handler needs %q", o["type"], m)
			}
		}
		return ""
	}, anyOf(not(is("type", "webhook", "custom", "log")),
		allOf(is("type", "webhook"), required("enabled", "trigger", "cooldownPeriod", "id")),
		allOf(is("type", "webhook"), required("enabled", "trigger", "cooldownPeriod", "url", "method", "bodyTemplate")),
		allOf(is("type", "custom"), required("enabled", "trigger", "name", "functionName", "path")),
		allOf(is("type", "log"), required("enabled", "trigger", "name", "logPrefix")))},
}

func has(o map[string]any, k string) bool {
	_, ok := o[k]
	return ok
}

func needsBodyOrPath(o map[string]any) string {
	if !has(o, "body") && !has(o, "path") {
		return "needs body or path"
	}
	return ""
}

// eventHandlerNeeds are the members an event handler of its type needs.
func eventHandlerNeeds(o map[string]any) []string {
	switch o["type"] {
	case "webhook":
		if has(o, "id") {
			return []string{"enabled", "trigger", "cooldownPeriod"}
		}
		return []string{"enabled", "trigger", "cooldownPeriod", "url", "method", "bodyTemplate"}
	case "custom":
		return []string{"enabled", "trigger", "name", "functionName", "path"}
	case "log":
		return []string{"enabled", "trigger", "name", "logPrefix"}
	}
	return nil
}

// JSON schema builders for extConditional.

func anyOf(s ...map[string]any) map[string]any { return map[string]any{"anyOf": s} }
func allOf(s ...map[string]any) map[string]any { return map[string]any{"allOf": s} }
func not(s map[string]any) map[string]any      { return map[string]any{"not": s} }

func required(members ...string) map[string]any { return map[string]any{"required": members} }

// is: the member is present and one of the values.
func is(member string, values ...any) map[string]any {
	return map[string]any{"required": []string{member}, "properties": map[string]any{member: map[string]any{"enum": values}}}
}
