// Command crdcheck validates Kubernetes manifests as an API server would
// before storing them: a custom resource against its CRD's schema (the
// OpenAPI validation of k8s.io/apiextensions-apiserver, and its pruning,
// whose dropped fields are errors here, as kubectl's strict field
// validation makes them), a built-in kind by a strict decode into its
// k8s.io/api type. Usage: crdcheck CRD_DIR FILE...; it prints a line per
// object and exits 1 when any is invalid.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"sigs.k8s.io/yaml"
)

// schema is one served version of a CRD.
type schema struct {
	validator  validation.SchemaValidator
	structural *structuralschema.Structural
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: crdcheck CRD_DIR FILE...")
		os.Exit(2)
	}
	schemas, err := loadCRDs(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "crdcheck:", err)
		os.Exit(2)
	}
	bad := false
	for _, file := range os.Args[2:] {
		b, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(os.Stderr, "crdcheck:", err)
			os.Exit(2)
		}
		for i, doc := range splitDocs(b) {
			what, errs := check(schemas, doc)
			if len(errs) == 0 {
				fmt.Printf("ok %s: %s\n", file, what)
				continue
			}
			bad = true
			for _, e := range errs {
				fmt.Printf("INVALID %s (document %d) %s: %s\n", file, i+1, what, e)
			}
		}
	}
	if bad {
		os.Exit(1)
	}
}

// loadCRDs reads every CRD of dir: group/version/kind -> its schema.
func loadCRDs(dir string) (map[string]schema, error) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if len(files) == 0 {
		return nil, fmt.Errorf("no CRD in %s", dir)
	}
	out := map[string]schema{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var crd apiextv1.CustomResourceDefinition
		if err := yaml.Unmarshal(b, &crd); err != nil {
			return nil, fmt.Errorf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if !v.Served || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				continue
			}
			var internal apiextensions.JSONSchemaProps
			if err := apiextv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
				return nil, fmt.Errorf("%s %s: %v", f, v.Name, err)
			}
			val, _, err := validation.NewSchemaValidator(&internal)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %v", f, v.Name, err)
			}
			st, err := structuralschema.NewStructural(&internal)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %v", f, v.Name, err)
			}
			out[crd.Spec.Group+"/"+v.Name+"/"+crd.Spec.Names.Kind] = schema{val, st}
		}
	}
	return out, nil
}

// splitDocs splits a YAML stream into its non-empty documents.
func splitDocs(b []byte) [][]byte {
	var docs [][]byte
	for _, d := range bytes.Split(append([]byte("\n"), b...), []byte("\n---")) {
		if len(bytes.TrimSpace(stripComments(d))) > 0 {
			docs = append(docs, d)
		}
	}
	return docs
}

func stripComments(d []byte) []byte {
	var out []byte
	for _, l := range bytes.Split(d, []byte("\n")) {
		if t := bytes.TrimSpace(l); len(t) > 0 && t[0] != '#' {
			out = append(out, l...)
		}
	}
	return out
}

// check validates one document; what names it.
func check(schemas map[string]schema, doc []byte) (what string, errs []string) {
	var obj map[string]any
	if err := yaml.Unmarshal(doc, &obj); err != nil {
		return "?", []string{err.Error()}
	}
	apiVersion, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	what = kind + "/" + name
	if name == "" {
		errs = append(errs, "metadata.name: Required value")
	}
	switch apiVersion + "/" + kind {
	case "v1/Secret":
		return what, append(errs, strict(doc, &corev1.Secret{})...)
	case "networking.k8s.io/v1/NetworkPolicy":
		return what, append(errs, strict(doc, &networkingv1.NetworkPolicy{})...)
	}
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return what, append(errs, fmt.Sprintf("apiVersion %q: not a group/version this checker knows", apiVersion))
	}
	s, ok := schemas[group+"/"+version+"/"+kind]
	if !ok {
		return what, append(errs, fmt.Sprintf("no CRD serves %s %s", apiVersion, kind))
	}
	for _, e := range validation.ValidateCustomResource(nil, obj, s.validator) {
		errs = append(errs, e.Error())
	}
	// Pruning drops what the schema does not declare: a field the API
	// server would silently throw away is an error here.
	var copyObj map[string]any
	b, _ := json.Marshal(obj)
	json.Unmarshal(b, &copyObj)
	for _, p := range pruning.PruneWithOptions(copyObj, s.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true}) {
		errs = append(errs, fmt.Sprintf("%s: unknown field", p))
	}
	return what, errs
}

// strict decodes doc into v, refusing unknown and duplicate fields.
func strict(doc []byte, v any) []string {
	if err := yaml.UnmarshalStrict(doc, v); err != nil {
		return []string{err.Error()}
	}
	return nil
}
