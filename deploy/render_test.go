package deploy

import (
	"fmt"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// rendered is one object of a kustomize build: its raw YAML (for messages) and
// the typed object decoded from it.
type rendered struct {
	id   string // Kind namespace/name, as kustomize names it
	yaml []byte
	obj  runtime.Object
}

// strictDecoder fails on unknown and duplicate fields, and on kinds that
// client-go's scheme does not know.
var strictDecoder = serializer.NewCodecFactory(scheme.Scheme, serializer.EnableStrict).UniversalDeserializer()

// render builds the kustomization in dir in-process (what
// `kubectl kustomize dir` does) and strict-decodes every object.
func render(dir string) ([]rendered, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	resMap, err := k.Run(filesys.MakeFsOnDisk(), abs)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var out []rendered
	for _, res := range resMap.Resources() {
		id := res.CurId().String()
		y, err := res.AsYAML()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", id, err)
		}
		obj, _, err := strictDecoder.Decode(y, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("%s: decode: %w", id, err)
		}
		out = append(out, rendered{id: id, yaml: y, obj: obj})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out, nil
}

func objectsOf(rs []rendered) []runtime.Object {
	objs := make([]runtime.Object, len(rs))
	for i, r := range rs {
		objs[i] = r.obj
	}
	return objs
}
