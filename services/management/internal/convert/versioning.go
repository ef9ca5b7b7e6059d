package convert

import (
	"net/url"
	"sort"
	"strings"
)

// The versioning split (Tyk's APIDefinition.MigrateVersioning): a classic API with several versions becomes a
// base API, which keeps the default version, plus one internal child API per other version. Children share
// every API-level setting of the base; only the fields of target differ.

// target is one document to build: the base or a child version.
type target struct {
	child       bool
	apiID       string
	dbID        string
	name        string
	listenPath  string
	targetURL   string
	expiration  string
	internal    bool
	versionName string       // the OpenAPI info.version
	version     *versionInfo // the version's endpoint and global settings
	versioning  *xVersioning // base only
}

// describe names the document in validation messages.
func (t *target) describe() string {
	if t.child {
		return "version API " + t.name
	}
	return "base API " + t.name
}

// splitVersions picks the base version and makes the targets: the base first, then the children sorted by
// version name.
func (c *converter) splitVersions(opts Options) []*target {
	api := c.api
	vd := api.VersionData
	enabled := !vd.NotVersioned

	baseKey, defaultName := baseVersion(vd, enabled)
	baseV := vd.Versions[baseKey]
	if baseV == nil {
		baseV = &versionInfo{}
	}

	base := &target{
		apiID:       api.APIID,
		dbID:        opts.DBID,
		name:        api.Name,
		listenPath:  api.Proxy.ListenPath,
		targetURL:   api.Proxy.TargetURL,
		expiration:  api.Expiration,
		internal:    api.Internal,
		versionName: baseKey,
		version:     baseV,
	}
	if base.dbID == "" {
		base.dbID = api.ID
	}
	if baseV.OverrideTarget != "" {
		base.targetURL = baseV.OverrideTarget
	}
	if enabled {
		// The API-level expiration of a versioned classic API expires nothing: the gateway checks it only for
		// not-versioned APIs (APISpec.RequestValid) and otherwise only sends it as X-Tyk-Api-Expires, so it is
		// not carried over (warnings.go announces the header).
		base.expiration = baseV.Expires
	}

	targets := []*target{base}
	var childKeys []string
	if enabled {
		for _, k := range sortedKeys(vd.Versions) {
			if k != baseKey {
				childKeys = append(childKeys, k)
			}
		}
	}
	targets = append(targets, c.childTargets(opts, childKeys)...)

	if opts.Staging {
		for _, t := range targets {
			t.apiID = StagingIDPrefix + t.apiID
			t.name = StagingNamePrefix + t.name
			t.listenPath = StagingListenPathPrefix + t.listenPath
		}
	}

	if enabled || len(childKeys) > 0 {
		base.versioning = c.versioning(baseKey, defaultName, enabled, targets[1:])
	}
	return targets
}

// baseVersion picks the version the base document keeps, and the name of the default version.
func baseVersion(vd versionData, enabled bool) (baseKey, defaultName string) {
	// Requests that name no version go to the default version. Only a default_version that names an existing
	// version makes the base that default ("self"); otherwise classic refuses such requests, and so does Tyk
	// OAS with an empty default (what Tyk's own migration writes), whichever version becomes the base.
	baseKey, ok := vd.DefaultVersion, false
	if enabled {
		defaultName = "self"
	}
	if _, ok = vd.Versions[baseKey]; !ok {
		defaultName = ""
		if _, ok = vd.Versions["Default"]; ok {
			baseKey = "Default"
		} else {
			keys := sortedKeys(vd.Versions)
			baseKey = ""
			if len(keys) > 0 {
				baseKey = keys[0]
			}
		}
	}
	return baseKey, defaultName
}

// childTargets makes a child document per version key, in the order of keys.
func (c *converter) childTargets(opts Options, keys []string) []*target {
	api := c.api
	vd := api.VersionData
	var targets []*target
	trimmed := strings.TrimSuffix(api.Proxy.ListenPath, "/")
	for _, k := range keys {
		v := vd.Versions[k]
		escaped := url.QueryEscape(k)
		child := &target{
			child:       true,
			apiID:       ChildID(api.APIID, k),
			name:        api.Name + "-" + escaped,
			targetURL:   api.Proxy.TargetURL,
			expiration:  v.Expires,
			internal:    true,
			versionName: k,
			version:     v,
		}
		if opts.VersionDBID != nil {
			child.dbID = opts.VersionDBID(child.apiID)
		}
		if trimmed == "" {
			child.listenPath = "/" + escaped + "/"
		} else {
			child.listenPath = trimmed + "-" + escaped + "/"
		}
		if v.OverrideTarget != "" {
			child.targetURL = v.OverrideTarget
		}
		targets = append(targets, child)
	}
	return targets
}

// versioning is the base document's info.versioning. fallback_to_default falls back to default_version; when
// that names no version, classic finds nothing to fall back to and refuses the request, while a Tyk OAS base with fallbackToDefault and no default
// answers 500 (mw_version_check.go looks up the empty name), so the setting is written only with a default.
func (c *converter) versioning(baseKey, defaultName string, enabled bool, children []*target) *xVersioning {
	def := c.api.Definition
	strip := def.StripVersioningData
	if def.Location == "url" {
		strip = def.StripPath
	}
	vs := &xVersioning{
		Enabled:              enabled,
		Name:                 baseKey,
		Default:              defaultName,
		Location:             def.Location,
		Key:                  def.Key,
		StripVersioningData:  strip,
		FallbackToDefault:    def.FallbackToDefault && defaultName != "",
		URLVersioningPattern: def.URLVersioningPattern,
	}
	for _, t := range children {
		vs.Versions = append(vs.Versions, xVersionToID{Name: t.versionName, ID: t.apiID})
	}
	sort.Slice(vs.Versions, func(i, j int) bool { return vs.Versions[i].Name < vs.Versions[j].Name })
	switch vs.Location {
	case "header", "url-param":
		if vs.Key == "" {
			c.fail("definition.key: versioning by %s needs the name of the %s that carries the version", vs.Location, vs.Location)
		}
	case "url":
	default:
		c.fail("definition.location: %q is not one of header, url-param, url", vs.Location)
	}
	return vs
}

// expirationLayout is the format of classic expiration and expires dates.
const expirationLayout = "2006-01-02 15:04"
