package deploy

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
)

// TestGatewayExample renders examples/tyk-gateway (a Tyk Gateway and a Redis
// beside the dev overlay): the Gatehouse workloads pass every check as in
// the overlays, the gateway's and Redis's pods pass the pod checks
// (non-root, read-only, resources, probes, no literal secrets), and both
// sides name the same node secret, the same Redis and management's address.
func TestGatewayExample(t *testing.T) {
	rs, err := render("examples/tyk-gateway")
	if err != nil {
		t.Fatal(err)
	}
	inv := inventoryOf(objectsOf(rs))
	var findings []finding
	add := func(check, object, format string, args ...any) {
		findings = append(findings, finding{check: check, object: object, msg: fmt.Sprintf(format, args...)})
	}
	envs := map[string]map[string]corev1.EnvVar{}
	for _, w := range inv.workloads {
		checkPod(w, add)
		checkServiceAccountOf(w, inv, add)
		if w.gatehouse() {
			checkStorage(w, add)
			checkNetworkPolicies(w, inv, add)
		}
		env := map[string]corev1.EnvVar{}
		for _, e := range w.template.Spec.Containers[0].Env {
			env[e.Name] = e
		}
		envs[w.name] = env
	}
	for _, f := range findings {
		t.Error(f)
	}

	secretOf := func(e corev1.EnvVar) string {
		if e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			return ""
		}
		return e.ValueFrom.SecretKeyRef.Name + "/" + e.ValueFrom.SecretKeyRef.Key
	}
	mgmt, gw := envs["management"], envs["tyk-gateway"]
	if s := secretOf(mgmt["NODE_SECRET"]); s == "" || s != secretOf(gw["TYK_GW_NODESECRET"]) {
		t.Errorf("node secret: management %q, gateway %q: want the same Secret key", s, secretOf(gw["TYK_GW_NODESECRET"]))
	}
	if mgmt["GATEWAY_REDIS"].Value != "redis://redis:6379" {
		t.Errorf("management GATEWAY_REDIS %q", mgmt["GATEWAY_REDIS"].Value)
	}

	var conf struct {
		UseDB bool `json:"use_db_app_configs"`
		DB    struct {
			ConnectionString string `json:"connection_string"`
		} `json:"db_app_conf_options"`
		Policies struct {
			Source           string `json:"policy_source"`
			ConnectionString string `json:"policy_connection_string"`
		} `json:"policies"`
		Storage struct {
			Type, Host string
			Port       int
		} `json:"storage"`
	}
	found := false
	for _, r := range rs {
		cm, ok := r.obj.(*corev1.ConfigMap)
		if !ok || !strings.HasPrefix(cm.Name, "tyk-gateway-conf") {
			continue
		}
		found = true
		if err := json.Unmarshal([]byte(cm.Data["tyk.conf"]), &conf); err != nil {
			t.Fatalf("tyk.conf: %v", err)
		}
	}
	if !found || !conf.UseDB || conf.DB.ConnectionString != "http://management:3000" || conf.Storage.Type != "redis" || conf.Storage.Host != "redis" || conf.Storage.Port != 6379 ||
		conf.Policies.Source != "service" || conf.Policies.ConnectionString != conf.DB.ConnectionString {
		t.Errorf("tyk.conf: %+v", conf)
	}
	for _, r := range rs {
		if d, ok := r.obj.(*appsv1.Deployment); ok && d.Name == "tyk-gateway" {
			vol := d.Spec.Template.Spec.Volumes[0]
			if vol.ConfigMap == nil || !strings.HasPrefix(vol.ConfigMap.Name, "tyk-gateway-conf") {
				t.Errorf("the gateway does not mount the generated tyk.conf: %+v", vol)
			}
		}
	}
}
