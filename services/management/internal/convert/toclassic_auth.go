package convert

// The OAS → classic direction of authentication (security.go): server.authentication and the OpenAPI security
// schemes become the classic auth flags, auth_configs and each method's settings. As in Tyk's extraction (legacy
// security processing, its default), the schemes a gateway enforces are those the document's first security
// requirement names: each by the type of its OpenAPI scheme (apiKey: auth token; http bearer JWT: JWT; http
// basic; oauth2: external OAuth when its x-tyk-api-gateway scheme has providers, else Tyk's OAuth), configured
// by the x-tyk-api-gateway scheme of the same name, whatever the name.

import (
	"slices"

	json "github.com/goccy/go-json"
)

// UnmarshalJSON keeps every scheme by its name, for schemes the OpenAPI part names as it likes.
func (s *xSecuritySchemes) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &s.byName); err != nil {
		return err
	}
	type plain xSecuritySchemes
	return json.Unmarshal(b, (*plain)(s))
}

// scheme decodes the x-tyk-api-gateway scheme name into dst; false when there is none.
func (s *xSecuritySchemes) scheme(name string, dst any) bool {
	if s == nil || s.byName[name] == nil {
		return false
	}
	return json.Unmarshal(s.byName[name], dst) == nil
}

// authenticationToClassic fills the classic authentication. Without server.authentication the API is keyless.
func authenticationToClassic(api *classicAPI, a *xAuthentication, d *classicSource) {
	if a == nil {
		api.UseKeyless = true
		return
	}
	api.UseKeyless = !a.Enabled
	api.StripAuthData, api.BaseIdentityProvidedBy = a.StripAuthorizationData, a.BaseIdentityProvider
	if kl := a.CustomKeyLifetime; kl != nil {
		api.SessionLifetimeRespectsKeyExpiration = kl.RespectValidity
		if kl.Enabled {
			api.SessionLifetime = int64(durationSeconds(kl.Value))
		}
	}
	api.AuthConfigs = map[string]authConfig{}
	schemesToClassic(api, a, d)
	if h := a.HMAC; h != nil {
		api.EnableSignatureChecking, api.HmacAllowedAlgorithms, api.HmacAllowedClockSkew = h.Enabled, h.AllowedAlgorithms, h.AllowedClockSkew
		api.AuthConfigs[hmacType] = authConfigOf("", h.xAuthSources)
	}
	oidcToClassic(api, a.OIDC)
	customAuthToClassic(api, a.Custom)
}

// schemesToClassic extracts the schemes of the first security requirement, when the API authenticates or
// configures schemes (as Tyk does).
func schemesToClassic(api *classicAPI, a *xAuthentication, d *classicSource) {
	if len(d.Security) == 0 || d.Components == nil || len(d.Components.SecuritySchemes) == 0 ||
		!(a.Enabled || (a.SecuritySchemes != nil && len(a.SecuritySchemes.byName) > 0)) {
		return
	}
	for _, name := range slices.Sorted(mapKeys(d.Security[0])) {
		if oas := d.Components.SecuritySchemes[name]; oas != nil {
			schemeToClassic(api, name, oas, a.SecuritySchemes)
		}
	}
}

// schemeToClassic extracts one scheme by the type of its OpenAPI scheme.
func schemeToClassic(api *classicAPI, name string, oas *securityScheme, ss *xSecuritySchemes) {
	switch {
	case oas.Type == "apiKey":
		var t *xToken
		ss.scheme(name, &t)
		tokenToClassic(api, name, t, oas)
	case oas.Type == "http" && oas.Scheme == "bearer" && oas.BearerFormat == "JWT":
		var j *xJWT
		ss.scheme(name, &j)
		jwtToClassic(api, name, j)
	case oas.Type == "http" && oas.Scheme == "basic":
		var b *xBasic
		ss.scheme(name, &b)
		basicToClassic(api, name, b)
	case oas.Type == "oauth2":
		oauth2ToClassic(api, name, ss, oas)
	}
}

// oauth2ToClassic: an oauth2 scheme is external OAuth when its x-tyk-api-gateway scheme lists providers.
func oauth2ToClassic(api *classicAPI, name string, ss *xSecuritySchemes, oas *securityScheme) {
	var e *xExternalOAuth
	if !ss.scheme(name, &e) {
		return // Tyk extracts an oauth2 scheme only with its x-tyk-api-gateway scheme
	}
	if e != nil && len(e.Providers) > 0 {
		externalOAuthToClassic(api, name, e)
		return
	}
	var o *xOAuth
	ss.scheme(name, &o)
	oauthToClassic(api, name, o, oas)
}

func mapKeys[M ~map[string]V, V any](m M) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// authConfigOf is the auth config that reads credentials from the sources: the header unless it is off, the
// query parameter and the cookie when they are on, each with its name.
func authConfigOf(name string, s xAuthSources) authConfig {
	ac := authConfig{Name: name, DisableHeader: true}
	if h := s.Header; h != nil {
		ac.DisableHeader, ac.AuthHeaderName = !h.Enabled, h.Name
	}
	if q := s.Query; q != nil {
		ac.UseParam, ac.ParamName = q.Enabled, q.Name
	}
	if c := s.Cookie; c != nil {
		ac.UseCookie, ac.CookieName = c.Enabled, c.Name
	}
	return ac
}

// tokenToClassic: the apiKey scheme also switches on the place it names, as Tyk's extraction does.
func tokenToClassic(api *classicAPI, name string, t *xToken, oas *securityScheme) {
	ac := authConfig{Name: name, DisableHeader: true}
	if t != nil {
		api.UseStandardAuth = t.Enabled
		ac = authConfigOf(name, t.xAuthSources)
		ac.UseCertificate = t.EnableClientCertificate
		signatureToClassic(&ac, t.SignatureValidation)
	}
	switch oas.In {
	case "header":
		ac.AuthHeaderName, ac.DisableHeader = oas.Name, false
	case "query":
		ac.ParamName, ac.UseParam = oas.Name, true
	case "cookie":
		ac.CookieName, ac.UseCookie = oas.Name, true
	}
	api.AuthConfigs[authTokenType] = ac
}

func signatureToClassic(ac *authConfig, s *xSignature) {
	if s != nil {
		ac.ValidateSignature = s.Enabled
		sig := &ac.Signature
		sig.Algorithm, sig.Header, sig.Secret, sig.AllowedClockSkew, sig.ErrorCode, sig.ErrorMessage =
			s.Algorithm, s.Header, s.Secret, s.AllowedClockSkew, s.ErrorCode, s.ErrorMessage
		if q := s.Query; q != nil {
			sig.UseParam, sig.ParamName = q.Enabled, q.Name
		}
	}
}

func jwtToClassic(api *classicAPI, name string, j *xJWT) {
	api.AuthConfigs[jwtType] = authConfig{Name: name, DisableHeader: true}
	if j == nil {
		return
	}
	api.EnableJWT = j.Enabled
	api.AuthConfigs[jwtType] = authConfigOf(name, j.xAuthSources)
	api.JWTSource, api.JWTSigningMethod, api.JWTIdentityBaseField, api.JWTSkipKid = j.Source, j.SigningMethod, j.IdentityBaseField, j.SkipKid
	api.JWTPolicyFieldName, api.JWTClientIDBaseField, api.JWTDefaultPolicies = j.PolicyFieldName, j.ClientBaseField, j.DefaultPolicies
	api.JWTIssuedAtValidationSkew, api.JWTNotBeforeValidationSkew, api.JWTExpiresAtValidationSkew =
		j.IssuedAtValidationSkew, j.NotBeforeValidationSkew, j.ExpiresAtValidationSkew
	api.IDPClientIDMappingDisabled = j.IDPClientIDMappingDisabled
	api.Scopes.JWT = scopesToClassic(j.Scopes)
}

func scopesToClassic(s *xScopes) scopeClaim {
	if s == nil {
		return scopeClaim{}
	}
	out := scopeClaim{ScopeClaimName: s.ClaimName}
	for _, m := range s.ScopeToPolicyMapping {
		if out.ScopeToPolicy == nil {
			out.ScopeToPolicy = map[string]string{}
		}
		out.ScopeToPolicy[m.Scope] = m.PolicyID
	}
	return out
}

func basicToClassic(api *classicAPI, name string, b *xBasic) {
	api.AuthConfigs[basicType] = authConfig{Name: name, DisableHeader: true}
	if b == nil {
		return
	}
	api.UseBasicAuth = b.Enabled
	api.AuthConfigs[basicType] = authConfigOf(name, b.xAuthSources)
	ba := &api.BasicAuth
	ba.DisableCaching, ba.CacheTTL = b.DisableCaching, b.CacheTTL
	if e := b.ExtractCredentialsFromBody; e != nil {
		ba.ExtractFromBody, ba.BodyUserRegexp, ba.BodyPasswordRegexp = e.Enabled, e.UserRegexp, e.PasswordRegexp
	}
}

// oauthToClassic reads the allowed grants from the flows of the OpenAPI oauth2 scheme, as Tyk does.
func oauthToClassic(api *classicAPI, name string, o *xOAuth, oas *securityScheme) {
	if o == nil {
		return
	}
	api.UseOauth2 = o.Enabled
	api.AuthConfigs[oauthType] = authConfigOf(name, o.xAuthSources)
	m := &api.OauthMeta
	m.AllowedAuthorizeTypes, m.AuthorizeLoginRedirect = o.AllowedAuthorizeTypes, o.AuthLoginRedirect
	if fl := oas.Flows; fl != nil {
		for _, f := range []struct {
			flow  *oauthFlow
			grant string
		}{{fl.AuthorizationCode, "authorization_code"}, {fl.ClientCredentials, "client_credentials"},
			{fl.Password, "password"}, {fl.Implicit, "implicit"}} {
			if f.flow != nil {
				m.AllowedAccessTypes = append(m.AllowedAccessTypes, f.grant)
			}
		}
	}
	if o.RefreshToken {
		m.AllowedAccessTypes = append(m.AllowedAccessTypes, "refresh_token")
	}
	if n := o.Notifications; n != nil {
		api.Notifications = notifications{SharedSecret: n.SharedSecret, OAuthKeyChangeURL: n.OnKeyChangeURL}
	}
}

func externalOAuthToClassic(api *classicAPI, name string, e *xExternalOAuth) {
	api.ExternalOAuth.Enabled = e.Enabled
	api.AuthConfigs[externalOAuthType] = authConfigOf(name, e.xAuthSources)
	api.ExternalOAuth.Providers = make([]externalOAuthProvider, len(e.Providers))
	for i, p := range e.Providers {
		out := &api.ExternalOAuth.Providers[i]
		if j := p.JWT; j != nil {
			out.JWT = jwtValidation{Enabled: j.Enabled, SigningMethod: j.SigningMethod, Source: j.Source, IdentityBaseField: j.IdentityBaseField,
				IssuedAtValidationSkew: j.IssuedAtValidationSkew, NotBeforeValidationSkew: j.NotBeforeValidationSkew, ExpiresAtValidationSkew: j.ExpiresAtValidationSkew}
		}
		if in := p.Introspection; in != nil {
			x := &out.Introspection
			x.Enabled, x.URL, x.ClientID, x.ClientSecret, x.IdentityBaseField = in.Enabled, in.URL, in.ClientID, in.ClientSecret, in.IdentityBaseField
			if c := in.Cache; c != nil {
				x.Cache.Enabled, x.Cache.Timeout = c.Enabled, c.Timeout
			}
		}
	}
}

func oidcToClassic(api *classicAPI, o *xOIDC) {
	if o == nil {
		return
	}
	api.UseOpenID = o.Enabled
	api.AuthConfigs[oidcType] = authConfigOf("", o.xAuthSources)
	api.OpenIDOptions.SegregateByClient = o.SegregateByClientID
	api.Scopes.OIDC = scopesToClassic(o.Scopes)
	api.OpenIDOptions.Providers = make([]openIDProvider, len(o.Providers))
	for i, p := range o.Providers {
		out := &api.OpenIDOptions.Providers[i]
		out.Issuer = p.Issuer
		for _, m := range p.ClientToPolicyMapping {
			if out.ClientIDs == nil {
				out.ClientIDs = map[string]string{}
			}
			out.ClientIDs[m.ClientID] = m.PolicyID
		}
	}
}

// customAuthToClassic: Tyk's gateway picks the Go plugin or the coprocess authentication by the plugin driver
// from custom_plugin_auth_enabled alone; the deprecated use_go_plugin_auth and enable_coprocess_auth stay false,
// as Tyk's OAS.ExtractTo leaves them (with several methods enabled, the gateway's multi-auth wrapper would run a
// coprocess authentication for each switch that is on).
func customAuthToClassic(api *classicAPI, c *xCustomAuth) {
	if c == nil {
		return
	}
	api.CustomPluginAuthEnabled = c.Enabled
	mw := &api.CustomMiddleware
	api.AuthConfigs[coprocessType] = authConfigOf("", c.xAuthSources)
	if cfg := c.Config; cfg != nil {
		mw.AuthCheck = middlewareDefinition{Disabled: !cfg.Enabled, Name: cfg.FunctionName, Path: cfg.Path, RawBodyOnly: cfg.RawBodyOnly, RequireSession: cfg.RequireSession}
		if ex := cfg.IDExtractor; ex != nil {
			id := &mw.IDExtractor
			id.Disabled, id.ExtractFrom, id.ExtractWith = !ex.Enabled, ex.Source, ex.With
			id.ExtractorConfig = idExtractorConfig(ex.Config)
		}
	}
}

func idExtractorConfig(c xIDExtractorConfig) map[string]any {
	m := map[string]any{}
	for k, v := range map[string]string{"header_name": c.HeaderName, "param_name": c.FormParamName, "regex_expression": c.Regexp, "xpath_expression": c.XPathExp} {
		if v != "" {
			m[k] = v
		}
	}
	if c.RegexpMatchIndex != 0 {
		m["regex_match_index"] = float64(c.RegexpMatchIndex)
	}
	return m
}
