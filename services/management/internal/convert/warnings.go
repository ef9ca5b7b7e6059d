package convert

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Behaviour changes the Tyk OAS form cannot avoid (issue 22). A Tyk Gateway (v5.11) runs a migrated API
// through other code than its classic definition in a few places; where the OAS form has no setting that
// keeps the classic answer, the API still migrates and its report carries one warning per change, naming
// the classic field. Each rule below cites the gateway code that makes the difference.

// Gateway answers the warnings quote (gateway/api_definition.go, RequestStatus constants).
const (
	msgVersionDoesNotExist = "This API version does not seem to exist"
	msgVersionNotFound     = "Version information not found"
	msgVersionExpired      = "Api Version has expired, please check documentation or contact administrator"
	msgAPIExpired          = "API has expired, please check documentation or contact administrator"
)

// now is the clock of the expiry rules; tests use fixed dates far from it.
var now = time.Now

// behaviourWarnings records the warnings of the documents in targets (the base first).
func (c *converter) behaviourWarnings(targets []*target) {
	c.expiryWarnings(targets)
	c.versionWarnings()
	for _, t := range targets {
		c.inertPathsWarning(t)
		c.validateJSONWarnings(t)
		c.templateSessionWarnings(t)
		c.regexPathWarnings(t)
	}
}

// inertPathsWarning: a version with use_extended_paths false runs its legacy path lists and ignores
// extended_paths (gateway/api_definition.go, the loader's RxPaths), while a Tyk OAS API runs every operation
// the conversion makes of them. Entries that would open the API fail it instead (normalise.go).
func (c *converter) inertPathsWarning(t *target) {
	v := t.version
	if v == nil || v.UseExtendedPaths {
		return
	}
	if n := v.ExtendedPaths.entries(); n > 0 {
		c.warn("%s: false: the classic gateway ignores this version's extended_paths (%d entries), the migrated API "+
			"applies them", versionField(t.versionName, "use_extended_paths"), n)
	}
}

// versionField names a version's field in messages, as the failure messages do.
func versionField(key, name string) string {
	return "version_data.versions[" + strconv.Quote(key) + "]." + name
}

// expiryWarnings: the X-Tyk-Api-Expires header and the expired-version answer (gateway/mw_version_check.go,
// APISpec.RequestValid).
//
// A not-versioned classic API sends X-Tyk-Api-Expires with its version's expires date until that date
// passes, and never refuses requests for it; only the API-level expiration expires such an API. A Tyk OAS API
// has no version expiry: the header comes only from info.expiration, which also refuses requests from that
// date on. Mapping the version's date to info.expiration would keep the header but start refusing requests
// on that date, so the conversion keeps the API serving and announces the lost header instead.
//
// A versioned classic API refuses an expired version with 403 VersionExpired; the migrated base and children
// carry their version's expires as info.expiration and, being Tyk OAS APIs (never "versioned" inside), answer
// 403 APIExpired. The classic header comes from the API-level expiration when it parses, else from the
// version; the migrated documents send their version's date. The API-level expiration itself never refuses
// a request of a versioned classic API (RequestValid checks it only for not-versioned ones), so it is not
// carried over and only its header is announced.
func (c *converter) expiryWarnings(targets []*target) {
	api := c.api
	_, apiExpErr := time.Parse(expirationLayout, api.Expiration)
	if api.VersionData.NotVersioned {
		base := targets[0]
		if apiExpErr == nil || base.version == nil {
			return
		}
		exp, err := time.Parse(expirationLayout, base.version.Expires)
		if err == nil && exp.After(now()) {
			c.warn("%s: %q: the X-Tyk-Api-Expires response header is no longer sent (a Tyk OAS API sends it only for "+
				"x-tyk-api-gateway.info.expiration, which would also refuse every request from that date on, where the "+
				"classic API only announces the date)", versionField(base.versionName, "expires"), base.version.Expires)
		}
		return
	}
	for _, t := range targets {
		if t.version == nil {
			continue
		}
		expires := t.version.Expires
		if apiExpErr == nil && expires != api.Expiration {
			if expires == "" || expires == "-1" {
				c.warn("expiration: %q: the X-Tyk-Api-Expires response header is no longer sent for version %q (classic sends "+
					"the API's expiration, which never refuses requests of a versioned API)", api.Expiration, t.versionName)
			} else {
				c.warn("expiration: %q: the X-Tyk-Api-Expires response header of version %q carries the version's expires (%q) "+
					"instead of the API's expiration", api.Expiration, t.versionName, expires)
			}
		}
		if expires != "" && expires != "-1" {
			c.warn("%s: %q: once the version has expired, its requests are refused with 403 %q instead of 403 %q",
				versionField(t.versionName, "expires"), expires, msgAPIExpired, msgVersionExpired)
		}
	}
}

// versionWarnings: requests that name no existing version (gateway/mw_version_check.go). Classic answers
// them from APISpec.Version with 403; a Tyk OAS base API that finds no child for the named version answers
// 404 with the same message, whatever its settings (no setting of the OAS form changes that status).
func (c *converter) versionWarnings() {
	vd := c.api.VersionData
	if vd.NotVersioned {
		return
	}
	if slug := c.api.Slug; slug != "" && c.api.Definition.Location == "url" {
		// gateway/api_definition.go, URLLocation: the path after the listen path loses a leading /<slug>
		// before its first segment is read as the version; a Tyk OAS API has no slug (ExtractTo leaves it out)
		c.warn("slug: %q with versioning by url: the classic gateway skips a leading /%s segment before reading "+
			"the version, the migrated API reads the version from that segment", slug, slug)
	}
	_, defaultExists := vd.Versions[vd.DefaultVersion]
	if !c.api.Definition.FallbackToDefault || !defaultExists {
		c.warn("version_data.versions: a request naming a version that is not listed is answered 404 instead of 403 "+
			"(same message, %q)", msgVersionDoesNotExist)
	}
	if vd.DefaultVersion != "" && !defaultExists {
		c.warn("version_data.default_version: %q names no version: a request naming no version is refused with 403 %q "+
			"instead of 403 %q", vd.DefaultVersion, msgVersionNotFound, msgVersionDoesNotExist)
	}
}

// validateJSONWarnings: validate_json becomes the operation's validateRequest, which the gateway runs with
// kin-openapi's request validator (gateway/mw_oas_validate_request.go) instead of the JSON schema validator
// of classic (gateway/mw_validate_json.go): other messages, a Content-Type the OpenAPI request body must
// match, and a missing or non-JSON body answered with the entry's error code instead of 400.
func (c *converter) validateJSONWarnings(t *target) {
	v := t.version
	if v == nil || !v.UseExtendedPaths {
		return
	}
	f := versionField(t.versionName, "extended_paths.validate_json")
	for _, e := range v.ExtendedPaths.ValidateJSON {
		if e.Disabled {
			continue
		}
		code := e.ErrorResponseCode
		if code == 0 {
			code = 422
		}
		// written out rather than with warn's fmt: three messages for every entry of every API migrated
		at, answered := f+": "+e.Method+" "+e.Path+": ", strconv.Itoa(code)
		c.note(at + "a body the schema refuses is answered " + answered + " with the OpenAPI validator's message " +
			"(\"request validation error: request body has an error: …\") instead of the JSON schema validator's " +
			"(e.g. \"(root): name is required\")")
		c.note(at + "a request without a body, or whose body is not JSON, is answered " + answered + " with the OpenAPI " +
			"validator's message instead of 400 \"JSON parsing error: …\"")
		c.note(at + "a JSON body is validated only when the request's Content-Type is application/json; " +
			"any other Content-Type is answered " + answered + " where classic validated the body")
	}
}

// templateSessionWarnings: a Tyk OAS body transformation has no session switch and always hands the template
// the session's metadata (Tyk's OAS.ExtractTo writes enable_session true), so a classic template with
// enable_session false that reads ._tyk_meta renders other output once migrated.
func (c *converter) templateSessionWarnings(t *target) {
	v := t.version
	if v == nil || !v.UseExtendedPaths {
		return
	}
	for _, l := range []struct {
		name    string
		entries []templateMeta
	}{{"transform", v.ExtendedPaths.Transform}, {"transform_response", v.ExtendedPaths.TransformResponse}} {
		for _, e := range l.entries {
			if e.Disabled || e.TemplateData.EnableSession {
				continue
			}
			c.warn("%s: %s %s: template_data.enable_session false: the migrated template always receives the "+
				"session's metadata (._tyk_meta), as a Tyk OAS body transformation has no such switch",
				versionField(t.versionName, "extended_paths."+l.name), e.Method, e.Path)
		}
	}
}

// regexPathWarnings: a classic path segment holding a regular expression becomes an OpenAPI path parameter
// (/old/[0-9]+ → /old/{customRegex1}), and Tyk's OAS.ExtractTo gives the gateway that OpenAPI path, whose
// {parameter} segments it matches as any one segment ([^/]+, internal/httputil PreparePathRegexp) whether it
// loads the document or the classic definition derived from it. The entry then also applies to requests the
// classic expression did not match. Allow entries are kept narrow by validateRequest and ignore entries fail
// the API (keepRegexPathsClosed); mock responses stay as Tyk converts them. A {name} or {name:regex} segment
// is matched as [^/]+ by the classic gateway too, so only other non-literal segments are warned.
func (c *converter) regexPathWarnings(t *target) {
	v := t.version
	if v == nil || !v.UseExtendedPaths {
		return
	}
	ep := reflect.ValueOf(&v.ExtendedPaths).Elem()
	for _, l := range regexWarnedLists() {
		entries := ep.Field(l.field)
		for j := range entries.Len() {
			e := entries.Index(j)
			path := e.FieldByIndex(l.path).String()
			if !hasRegexSegment(path) || e.FieldByIndex(l.disabled).Bool() {
				continue
			}
			tp, err := templatePath(path)
			if err != nil {
				continue
			}
			c.note(versionField(t.versionName, "extended_paths."+l.name) + ": " + e.FieldByIndex(l.method).String() + " " + path +
				": the migrated API matches this path as " + tp.path + ", any one segment for each {parameter}, where " +
				"classic matched the regular expression: the entry applies to other requests than in classic")
		}
	}
}

// regexWarnedList is an extended_paths list regexPathWarnings reads: the
// field's index in extendedPaths, its JSON name and the indexes of its
// entries' Path, Method and Disabled fields.
type regexWarnedList struct {
	field                  int
	name                   string
	path, method, disabled []int
}

// regexWarnedLists are the extended_paths lists of entries (structs) of the
// kinds but white_list, ignored and mock_response, in field order, with
// their entries' field indexes; found once (reading struct tags per API cost
// an eighth of a conversion, finding fields by name per entry a fiftieth).
var regexWarnedLists = sync.OnceValue(func() []regexWarnedList {
	var out []regexWarnedList
	ep := reflect.TypeFor[extendedPaths]()
	for i := range ep.NumField() {
		list, _, _ := strings.Cut(ep.Field(i).Tag.Get("json"), ",")
		if list == "white_list" || list == "ignored" || list == "mock_response" ||
			!slices.ContainsFunc(kinds, func(k kind) bool { return k.list == list }) {
			continue
		}
		entry := ep.Field(i).Type.Elem()
		if entry.Kind() != reflect.Struct { // cache: bare paths, which this warning never read
			continue
		}
		l := regexWarnedList{field: i, name: list}
		for name, index := range map[string]*[]int{"Path": &l.path, "Method": &l.method, "Disabled": &l.disabled} {
			f, ok := entry.FieldByName(name)
			if !ok {
				panic("convert: extended_paths." + list + " entries have no " + name)
			}
			*index = f.Index
		}
		out = append(out, l)
	}
	return out
})

// hasRegexSegment reports whether a classic path has a segment that is neither literal text nor a {name} or
// {name:regex} template.
func hasRegexSegment(path string) bool {
	for seg := range strings.SplitSeq(strings.TrimPrefix(path, "/"), "/") {
		if seg != "" && !literalSegment(seg) && !(strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}")) {
			return true
		}
	}
	return false
}
