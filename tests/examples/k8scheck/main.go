// Command k8scheck decodes Kubernetes manifests strictly into the API's own Go types, offline: an
// unknown or misspelt field, a value of the wrong type, a malformed quantity or a duplicate key is
// an error, as the API server's strict field validation would make it. It prints each document as
// the API types hold it (JSON, one line each) for further checks, and exits 1 on the first problem.
//
// Usage: k8scheck FILE...
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// kinds are the objects this checker knows, by apiVersion and kind.
var kinds = map[string]func() any{
	"batch/v1/Job":             func() any { return &batchv1.Job{} },
	"batch/v1/CronJob":         func() any { return &batchv1.CronJob{} },
	"v1/PersistentVolumeClaim": func() any { return &corev1.PersistentVolumeClaim{} },
	"v1/ConfigMap":             func() any { return &corev1.ConfigMap{} },
	"v1/Secret":                func() any { return &corev1.Secret{} },
	"v1/Pod":                   func() any { return &corev1.Pod{} },
}

func documents(path string) ([][]byte, error) {
	file, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	reader := utilyaml.NewYAMLReader(bufio.NewReader(file))
	var docs [][]byte
	for {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(doc)) > 0 {
			docs = append(docs, doc)
		}
	}
}

func decode(doc []byte) (any, error) {
	var meta metav1.TypeMeta
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return nil, err
	}
	newObject, ok := kinds[meta.APIVersion+"/"+meta.Kind]
	if !ok {
		return nil, fmt.Errorf("apiVersion %q kind %q is not one this checker knows", meta.APIVersion, meta.Kind)
	}
	object := newObject()
	if err := yaml.UnmarshalStrict(doc, object); err != nil {
		return nil, err
	}
	return object, nil
}

func check(path string, out *json.Encoder) error {
	docs, err := documents(path)
	if err != nil {
		return err
	}
	if len(docs) == 0 {
		return errors.New("no documents")
	}
	for i, doc := range docs {
		object, err := decode(doc)
		if err != nil {
			return fmt.Errorf("document %d: %w", i+1, err)
		}
		if err := out.Encode(object); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: k8scheck FILE...")
		os.Exit(2)
	}
	out := json.NewEncoder(os.Stdout)
	for _, path := range os.Args[1:] {
		if err := check(path, out); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
			os.Exit(1)
		}
	}
}
