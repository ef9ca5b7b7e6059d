package deploy

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// checkEtcdSecured covers the replicated overlay's etcd and its clients
// (part of checkReplicated): etcd serves clients and peers over TLS only and
// verifies its peers' certificates; every service on etcd verifies etcd with
// a CA, logs in with a user whose password comes from a Secret, and has
// Prometheus scrape annotations naming its http port; and etcd's client port
// admits the three services' pods and nothing else.
func checkEtcdSecured(w workload, inv inventory, add addFunc) {
	id := w.String()
	for _, c := range w.template.Spec.Containers {
		if !isGatehouse(c) {
			checkEtcdTLS(id, c, add)
			continue
		}
		if v, _ := envOf(c, "STORE"); v != "etcd" {
			continue
		}
		eps, _ := envOf(c, "ETCD_ENDPOINTS")
		for e := range strings.SplitSeq(eps, ",") {
			if !strings.HasPrefix(strings.TrimSpace(e), "https://") {
				add(checkReplicated, id, "etcd endpoint %q is not https", e)
			}
		}
		if ca, _ := envOf(c, "ETCD_CACERT"); ca == "" {
			add(checkReplicated, id, "no ETCD_CACERT: etcd's certificate is not verified")
		}
		if u, _ := envOf(c, "ETCD_USERNAME"); u == "" {
			add(checkReplicated, id, "no ETCD_USERNAME: the service does not log in to etcd")
		}
		if !passwordFromSecret(c) {
			add(checkReplicated, id, "ETCD_PASSWORD does not come from a Secret (secretKeyRef) nor ETCD_PASSWORD_FILE from a mounted one")
		}
		a := w.template.Annotations
		port, ok := containerPort(c, intstr.FromString("http"), 0)
		if a["prometheus.io/scrape"] != "true" || a["prometheus.io/path"] != "/metrics" || !ok || a["prometheus.io/port"] != strconv.Itoa(int(port.ContainerPort)) {
			add(checkReplicated, id, "no Prometheus scrape annotations for /metrics on the http port (prometheus.io/scrape, port, path)")
		}
	}
	if !w.gatehouse() {
		checkEtcdClientsOnly(w, inv, add)
	}
}

func checkEtcdTLS(id string, c corev1.Container, add addFunc) {
	flags := map[string]string{}
	for _, a := range append(append([]string(nil), c.Command...), c.Args...) {
		if k, v, ok := strings.Cut(a, "="); ok {
			flags[k] = v
		}
	}
	for _, f := range []string{"--listen-client-urls", "--advertise-client-urls", "--listen-peer-urls", "--initial-advertise-peer-urls", "--initial-cluster"} {
		if v := flags[f]; v == "" || strings.Contains(v, "http://") {
			add(checkReplicated, id, "etcd %s=%q: want https only", f, v)
		}
	}
	for _, f := range []string{"--cert-file", "--key-file", "--trusted-ca-file", "--peer-cert-file", "--peer-key-file", "--peer-trusted-ca-file"} {
		if flags[f] == "" {
			add(checkReplicated, id, "etcd without %s", f)
		}
	}
	if flags["--peer-client-cert-auth"] != "true" {
		add(checkReplicated, id, "etcd does not verify its peers' certificates (--peer-client-cert-auth=true)")
	}
}

func passwordFromSecret(c corev1.Container) bool {
	for _, e := range c.Env {
		switch {
		case e.Name == "ETCD_PASSWORD" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil:
			return true
		case e.Name == "ETCD_PASSWORD_FILE" && e.Value != "":
			return true
		}
	}
	return false
}

// checkEtcdClientsOnly: every ingress rule of a policy on the etcd pods
// that opens the client port admits pods of this namespace only (no
// namespace or address blocks), and those pods are the three services'.
func checkEtcdClientsOnly(w workload, inv inventory, add addFunc) {
	etcdPod := labels.Set(w.template.Labels)
	for _, np := range inv.netpols {
		sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if err != nil || !selects(np.Namespace, sel, w) || !policyHasIngress(np) {
			continue
		}
		id := "NetworkPolicy " + qualified(np.Namespace, np.Name)
		for _, rule := range np.Spec.Ingress {
			client := false
			for _, p := range rule.Ports {
				if cp, ok := containerPort(w.template.Spec.Containers[0], *p.Port, 0); ok && cp.Name == "client" {
					client = true
				}
			}
			if !client {
				continue
			}
			if len(rule.From) == 0 {
				add(checkReplicated, id, "etcd's client port is open to every pod")
			}
			for _, peer := range rule.From {
				if peer.PodSelector == nil || peer.NamespaceSelector != nil || peer.IPBlock != nil {
					add(checkReplicated, id, "etcd's client port admits more than this namespace's service pods")
					continue
				}
				from, err := metav1.LabelSelectorAsSelector(peer.PodSelector)
				if err != nil {
					continue
				}
				for _, other := range []labels.Set{etcdPod, {"app.kubernetes.io/name": "debug", "app.kubernetes.io/part-of": "gatehouse"}} {
					if from.Matches(other) {
						add(checkReplicated, id, "etcd's client port admits pods labelled %v, which are not a service", other)
					}
				}
			}
		}
	}
}
