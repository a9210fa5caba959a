package v1alpha1_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"linerate.dev/linerate/api/v1alpha1"
)

// TestEveryFieldIsDocumented keeps `kubectl explain traffictest.spec` and `.status` a manual: every property
// of every generated CRD schema carries a description (from the field's doc comment). A field added without
// one fails here, named by its path.
func TestEveryFieldIsDocumented(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "config", "crd", "bases", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs under config/crd/bases (%v)", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
				t.Errorf("%s %s: no schema", crd.Name, v.Name)
				continue
			}
			var undocumented []string
			walkUndocumented(crd.Spec.Names.Kind, *v.Schema.OpenAPIV3Schema, &undocumented)
			sort.Strings(undocumented)
			for _, path := range undocumented {
				t.Errorf("%s %s: %s has no description: give the Go field a doc comment", crd.Name, v.Name, path)
			}
		}
	}
}

// walkUndocumented appends the path of every property below s that has no description.
func walkUndocumented(path string, s apiextensionsv1.JSONSchemaProps, out *[]string) {
	for name, p := range s.Properties {
		child := path + "." + name
		// the object's metadata is ObjectMeta, which kubectl explains itself; controller-gen writes no text
		isObjectMeta := name == "metadata" && !strings.Contains(path, ".")
		if p.Description == "" && !isObjectMeta {
			*out = append(*out, child)
		}
		walkUndocumented(child, p, out)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkUndocumented(path+"[]", *s.Items.Schema, out)
	}
	if s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil {
		walkUndocumented(path+"{}", *s.AdditionalProperties.Schema, out)
	}
}

// `kubectl get traffictests` shows where a queued test stands and what it waits for: the columns read the
// status fields the operator writes (a renamed field would leave them empty without this).
func TestQueueColumnsReadTheQueue(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "config", "crd", "bases", "linerate.dev_traffictests.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"Phase": ".status.phase", "Queue": ".status.queue.position", "Waiting For": ".status.queue.waitingFor[0]",
		"Verdict": ".status.verdict"}
	for _, v := range crd.Spec.Versions {
		got := map[string]string{}
		for _, c := range v.AdditionalPrinterColumns {
			got[c.Name] = c.JSONPath
		}
		for name, path := range want {
			if got[name] != path {
				t.Errorf("%s: column %q reads %q, want %q", v.Name, name, got[name], path)
			}
		}
	}
	// the paths name real fields: a queued status marshals them
	b, err := json.Marshal(v1alpha1.TrafficTestStatus{Phase: v1alpha1.PhaseQueued,
		Queue: &v1alpha1.QueueStatus{Position: 2, WaitingFor: []string{"a runs on DUT gw"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{`"phase":"Queued"`, `"queue":{"position":2,"waitingFor":["a runs on DUT gw"]}`} {
		if !strings.Contains(string(b), field) {
			t.Errorf("status %s lacks %s", b, field)
		}
	}
}
