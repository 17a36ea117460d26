package wire

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/yaml"
)

// YAMLToJSON converts a YAML request body to JSON (400 when it is not
// YAML). A key given twice in one mapping keeps its last value, as
// Kubernetes keeps it; duplicates lists each such key as Kubernetes words
// it (`line 4: key "c" already set in map`), for fieldValidation to warn
// about or refuse.
func YAMLToJSON(body []byte) (js []byte, duplicates []string, err error) {
	js, err = yaml.YAMLToJSON(body)
	if err != nil {
		return nil, nil, apierrors.NewBadRequest(fmt.Sprintf("malformed YAML: %v", err))
	}
	if _, serr := yaml.YAMLToJSONStrict(body); serr != nil {
		for _, line := range strings.Split(serr.Error(), "\n") {
			if line = strings.TrimSpace(line); strings.HasSuffix(line, "already set in map") {
				duplicates = append(duplicates, line)
			}
		}
	}
	return js, duplicates, nil
}

// WantsYAML reports whether an Accept header asks for application/yaml
// (and, AcceptsJSON having said no, not for JSON).
func WantsYAML(values []string) bool {
	for _, v := range values {
		for _, r := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(r)); err == nil && mt == MediaYAML {
				return true
			}
		}
	}
	return false
}

// YAMLWriter turns the JSON response a handler writes into YAML: it keeps
// the status and body until Finish, then writes the body converted. Watch
// streams are not served as YAML (Kubernetes answers them 406 too).
type YAMLWriter struct {
	http.ResponseWriter
	code int
	buf  bytes.Buffer
}

// WriteHeader records the status for Finish.
func (y *YAMLWriter) WriteHeader(code int) {
	if y.code == 0 {
		y.code = code
	}
}

// Write buffers the JSON body.
func (y *YAMLWriter) Write(p []byte) (int, error) {
	if y.code == 0 {
		y.code = http.StatusOK
	}
	return y.buf.Write(p)
}

// Finish writes the buffered response as YAML (as it was, if it is not
// JSON).
func (y *YAMLWriter) Finish() {
	if y.code == 0 {
		return
	}
	body := y.buf.Bytes()
	h := y.ResponseWriter.Header()
	if mt, _, _ := mime.ParseMediaType(h.Get("Content-Type")); mt == MediaJSON {
		if out, err := yaml.JSONToYAML(body); err == nil {
			body = out
			h.Set("Content-Type", MediaYAML)
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	y.ResponseWriter.WriteHeader(y.code)
	_, _ = y.ResponseWriter.Write(body)
}
