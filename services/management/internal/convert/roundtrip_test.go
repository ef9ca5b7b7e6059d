package convert

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The two round-trip properties of ToClassic, on every classic definition the converter's tests convert
// (testdata/*.json, the golden cases, and the Tyk fixture table) and by FuzzRoundTrip:
//   - classic → OAS → classic keeps every field a gateway acts on: the identity, state, listen path, target,
//     authentication switches and global settings of each document's version, and every endpoint entry;
//   - OAS → classic → OAS is the identity on x-tyk-api-gateway: converting the derived classic definition again
//     gives the same extension. The settings a gateway reads from the OAS document itself (mock responses,
//     request validation) are put back from the document first, as a Dashboard fills an existing document;
//     the versioning (new-style in the derived definition, which the migration refuses) is compared field by
//     field instead.

// roundTrip checks both properties for one classic definition; it returns false when the definition does not
// convert.
func roundTrip(t testing.TB, raw []byte, opts Options) bool {
	res, err := Convert(raw, opts)
	if err != nil {
		var f *Failure
		if !errors.As(err, &f) {
			t.Fatalf("Convert: %v", err)
		}
		return false
	}
	p := Parse(raw)
	c := &converter{api: &p.api}
	c.normalise()
	targets := c.splitVersions(opts)
	docs := append([]Document{res.Base}, res.Versions...)
	for i, d := range docs {
		derived, err := ToClassic(d.JSON)
		if err != nil {
			t.Fatalf("%s: ToClassic: %v", d.Name, err)
		}
		var got classicAPI
		if err := json.Unmarshal(derived, &got); err != nil {
			t.Fatalf("%s: the derived classic definition does not decode: %v\n%s", d.Name, err, derived)
		}
		if bad := keptFields(c.api, targets[i], &got); len(bad) > 0 {
			t.Errorf("%s: classic → OAS → classic lost what a gateway acts on:\n  %s\nderived: %s", d.Name, strings.Join(bad, "\n  "), derived)
		}
		checkOASIdentity(t, d, &got)
	}
	return true
}

// keptFields lists what the derived classic definition of target t does not keep of the normalised classic api.
func keptFields(api *classicAPI, t *target, got *classicAPI) []string {
	var bad []string
	same := func(name string, want, have any) {
		if !reflect.DeepEqual(want, have) {
			bad = append(bad, fmt.Sprintf("%s: %v, want %v", name, have, want))
		}
	}
	same("is_oas", true, got.IsOAS)
	same("api_id", t.apiID, got.APIID)
	same("name", t.name, got.Name)
	same("org_id", api.OrgID, got.OrgID)
	same("active", api.Active, got.Active)
	same("internal", t.internal, got.Internal)
	same("proxy.listen_path", t.listenPath, got.Proxy.ListenPath)
	same("proxy.target_url", t.targetURL, got.Proxy.TargetURL)
	same("proxy.strip_listen_path", api.Proxy.StripListenPath, got.Proxy.StripListenPath)
	same("proxy.preserve_host_header", api.Proxy.PreserveHostHeader, got.Proxy.PreserveHostHeader)
	same("use_keyless", api.UseKeyless, got.UseKeyless)
	for _, f := range []struct {
		name       string
		want, have bool
	}{
		{"use_standard_auth", api.UseStandardAuth, got.UseStandardAuth}, {"enable_jwt", api.EnableJWT, got.EnableJWT},
		{"use_basic_auth", api.UseBasicAuth, got.UseBasicAuth}, {"use_oauth2", api.UseOauth2, got.UseOauth2},
		{"enable_signature_checking", api.EnableSignatureChecking, got.EnableSignatureChecking},
		{"use_openid", api.UseOpenID, got.UseOpenID}, {"custom_plugin_auth_enabled", api.CustomPluginAuthEnabled, got.CustomPluginAuthEnabled},
		{"external_oauth.enabled", api.ExternalOAuth.Enabled, got.ExternalOAuth.Enabled},
		{"do_not_track", api.DoNotTrack, got.DoNotTrack}, {"enable_context_vars", api.EnableContextVars, got.EnableContextVars},
		{"CORS.enable", api.CORS.Enable, got.CORS.Enable}, {"cache_options.enable_cache", api.CacheOptions.EnableCache, got.CacheOptions.EnableCache},
		{"disable_rate_limit", api.DisableRateLimit, got.DisableRateLimit}, {"disable_quota", api.DisableQuota, got.DisableQuota},
	} {
		same(f.name, f.want, f.have)
	}
	if api.UseKeyless {
		same("auth_configs", 0, len(got.AuthConfigs))
	} else {
		same("auth_configs", slices.Sorted(mapKeys(api.AuthConfigs)), slices.Sorted(mapKeys(got.AuthConfigs)))
	}
	if api.GlobalRateLimit.Rate > 0 {
		same("global_rate_limit", api.GlobalRateLimit, got.GlobalRateLimit)
	}
	same("proxy.target_list", len(api.Proxy.Targets), len(got.Proxy.Targets))
	v := got.VersionData.Versions[""]
	if v == nil || !got.VersionData.NotVersioned {
		return append(bad, "version_data: want not_versioned with the version \"\"")
	}
	same("global_headers", len(t.version.GlobalHeaders), len(v.GlobalHeaders))
	same("global_size_limit", t.version.GlobalSizeLimit, v.GlobalSizeLimit)
	return append(bad, missingEntries(&t.version.ExtendedPaths, &v.ExtendedPaths)...)
}

// missingEntries lists the endpoint entries of want (list, method, operation path, disabled) that got lacks,
// for every list the derived definition carries.
func missingEntries(want, got *extendedPaths) []string {
	entries := func(ep *extendedPaths) map[string]bool {
		raw, _ := json.Marshal(ep)
		var lists map[string][]endpointRef
		_ = json.Unmarshal(raw, &lists)
		out := map[string]bool{}
		for _, k := range kinds {
			if k.toClassic == nil {
				continue
			}
			for _, e := range lists[k.list] {
				path := e.Path
				if tp, err := templatePath(path); err == nil {
					path = tp.path // classic entries that become one operation (equal settings merge) are kept as one
				}
				out[fmt.Sprintf("%s: %s %s disabled=%v", k.list, e.Method, path, e.Disabled)] = true
			}
		}
		return out
	}
	have := entries(got)
	var bad []string
	for _, e := range slices.Sorted(mapKeys(entries(want))) {
		if !have[e] {
			bad = append(bad, "missing "+e)
		}
	}
	return bad
}

// checkOASIdentity converts the derived classic definition again and compares the extension with the document's.
func checkOASIdentity(t testing.TB, d Document, derived *classicAPI) {
	var doc oasDocument
	if err := json.Unmarshal(d.JSON, &doc); err != nil {
		t.Fatal(err)
	}
	c := *derived
	c.IsOAS = false
	def := c.Definition
	c.Definition = versionDefinition{}
	restoreOASOnly(&c, &doc)
	// The migration names the OpenAPI info.version after the version's key; the derived definition's only
	// version is "", so it gets the document's info.version back (it is not part of the extension).
	c.VersionData.Versions = map[string]*versionInfo{doc.Info.Version: c.VersionData.Versions[""]}
	res, err := Convert(mustMarshal(t, &c), Options{})
	if err != nil {
		t.Errorf("%s: OAS → classic → OAS: the derived definition does not convert: %v", d.Name, err)
		return
	}
	// Operations are compared by route, not by operationId: a classic regular expression path becomes an
	// OpenAPI path with a parameter, which the derived definition carries as ExtractTo writes it
	// (/old/{customRegex1}), so converting it again names the operation after that path.
	want, got := operationsByRoute(t, d.JSON), operationsByRoute(t, res.Base.JSON)
	info := want["info"].(map[string]any)
	versioning := info["versioning"]
	delete(info, "versioning")
	if !reflect.DeepEqual(want, got) {
		t.Errorf("%s: OAS → classic → OAS changed x-tyk-api-gateway:\nwant %s\ngot  %s", d.Name, mustMarshal(t, want), mustMarshal(t, got))
	}
	var vs *xVersioning
	if versioning != nil {
		vs = &xVersioning{}
		_ = json.Unmarshal(mustMarshal(t, versioning), vs)
	}
	if !sameVersioning(vs, def) {
		t.Errorf("%s: the derived definition's versioning %+v differs from the document's %+v", d.Name, def, vs)
	}
}

func sameVersioning(vs *xVersioning, def versionDefinition) bool {
	if vs == nil {
		return reflect.DeepEqual(def, versionDefinition{})
	}
	ids := map[string]string{}
	for _, v := range vs.Versions {
		ids[v.Name] = v.ID
	}
	if len(ids) == 0 {
		ids = nil
	}
	return def.Enabled == vs.Enabled && def.Name == vs.Name && def.Default == vs.Default && def.Location == vs.Location &&
		def.Key == vs.Key && def.StripVersioningData == vs.StripVersioningData && def.FallbackToDefault == vs.FallbackToDefault &&
		def.URLVersioningPattern == vs.URLVersioningPattern && reflect.DeepEqual(def.Versions, ids)
}

// operationsByRoute is the decoded x-tyk-api-gateway of a document with its operations keyed by
// "METHOD /openapi/path" instead of operationId.
func operationsByRoute(t testing.TB, doc []byte) map[string]any {
	x := extension(t, doc)
	ops, _ := lookupPath(x, "middleware", "operations").(map[string]any)
	if ops == nil {
		return x
	}
	var d oasDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	routes := map[string]any{}
	for p, item := range d.Paths {
		for _, method := range httpMethods {
			if op := *item.operation(method); op != nil && ops[op.OperationID] != nil {
				routes[method+" "+p] = ops[op.OperationID]
				delete(ops, op.OperationID)
			}
		}
	}
	for id, op := range ops { // operations no path names stay under their id
		routes["id "+id] = op
	}
	x["middleware"].(map[string]any)["operations"] = routes
	return x
}

// extension is the decoded x-tyk-api-gateway of a document.
func extension(t testing.TB, doc []byte) map[string]any {
	var d map[string]any
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatal(err)
	}
	x, _ := d["x-tyk-api-gateway"].(map[string]any)
	return x
}

// restoreOASOnly adds to a derived classic definition the mock responses and request validations of the
// document's operations, which the gateway reads from the document and ToClassic leaves out.
func restoreOASOnly(c *classicAPI, d *oasDocument) {
	// as Tyk's OAS.ExtractTo, the derived definition carries neither the legacy slug nor a log handler's id
	// and name (the gateway acts on none of them there)
	c.Slug = d.XTyk.Server.Slug
	logs := map[string]int{}
	for _, h := range d.XTyk.Server.EventHandlers {
		if h.Type != "log" {
			continue
		}
		n := logs[h.Trigger]
		logs[h.Trigger]++
		for _, eh := range c.EventHandlers.Events[h.Trigger] {
			if eh.Handler != "eh_log_handler" {
				continue
			}
			if n--; n < 0 {
				if h.ID != "" {
					eh.HandlerMeta["id"] = h.ID
				}
				if h.Name != "" {
					eh.HandlerMeta["name"] = h.Name
				}
				break
			}
		}
	}
	ep := &c.VersionData.Versions[""].ExtendedPaths
	if d.XTyk.Middleware == nil {
		return
	}
	ops := d.XTyk.Middleware.Operations
	for p, item := range d.Paths {
		for _, method := range httpMethods {
			op := *item.operation(method)
			if op == nil || ops[op.OperationID] == nil {
				continue
			}
			x, path := ops[op.OperationID], p
			if m := x.MockResponse; m != nil {
				ep.MockResponse = append(ep.MockResponse, mockResponseMeta{Disabled: !m.Enabled, Path: path, Method: method,
					Code: m.Code, Body: m.Body, Headers: headerMap(m.Headers)})
			}
			if v := x.ValidateRequest; v != nil && op.RequestBody != nil {
				ep.ValidateJSON = append(ep.ValidateJSON, validateJSONMeta{Disabled: !v.Enabled, Path: path, Method: method,
					Schema: op.RequestBody.Content["application/json"].Schema, ErrorResponseCode: v.ErrorResponseCode})
			}
		}
	}
}

func TestRoundTripTestdata(t *testing.T) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	converted := 0
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			raw, err := os.ReadFile(in)
			if err != nil {
				t.Fatal(err)
			}
			if roundTrip(t, raw, Options{Staging: strings.HasPrefix(name, "staging-")}) {
				converted++
			}
		})
	}
	if converted < 10 {
		t.Errorf("only %d of %d testdata definitions convert; the round trip covers too little", converted, len(inputs))
	}
}

func TestRoundTripTykFixtures(t *testing.T) {
	converted := 0
	for _, e := range tykClassicCases {
		if e.wantFailure {
			continue
		}
		t.Run(e.name, func(t *testing.T) {
			var input any
			if err := json.Unmarshal([]byte(e.input), &input); err != nil {
				t.Fatal(err)
			}
			const id = "f1x7ur3a0000000000000000000000aa"
			def := fixtureClassic(toJSONValue(t, input), id, "Fixture", "/fixture/", false)
			if roundTrip(t, mustMarshal(t, def), Options{DBID: "0123456789abcdef01234567"}) {
				converted++
			}
		})
	}
	if converted == 0 {
		t.Error("no fixture case converted")
	}
}

// FuzzRoundTrip: every classic definition that converts keeps both round-trip properties.
func FuzzRoundTrip(f *testing.F) {
	inputs, _ := filepath.Glob(filepath.Join("testdata", "*.json"))
	for _, in := range inputs {
		if b, err := os.ReadFile(in); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		roundTrip(t, raw, Options{})
	})
}

// FuzzToClassic: any input either derives a classic definition that decodes, or fails with an error.
func FuzzToClassic(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"x-tyk-api-gateway":{"middleware":{"operations":{"aGET":{"allow":{"enabled":true}}}}},"paths":{"/a":{"get":{"operationId":"aGET"}}}}`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		out, err := ToClassic(doc)
		if err != nil {
			return
		}
		var api classicAPI
		if err := json.Unmarshal(out, &api); err != nil || !api.IsOAS {
			t.Fatalf("derived %s: %v", out, err)
		}
	})
}
