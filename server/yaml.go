package server

import (
	"bytes"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// mediaYAML is the YAML media type: accepted in create, update and delete
// bodies and served to clients that ask for it, as Kubernetes does.
const mediaYAML = "application/yaml"

// yamlToJSON converts a YAML request body to JSON (400 when it is not YAML).
func yamlToJSON(body []byte) ([]byte, error) {
	js, err := yaml.YAMLToJSON(body)
	if err != nil {
		return nil, badRequest(fmt.Sprintf("malformed YAML: %v", err))
	}
	return js, nil
}

// wantsYAML reports whether an Accept header asks for application/yaml
// (and, acceptsJSON having said no, not for JSON).
func wantsYAML(values []string) bool {
	for _, v := range values {
		for _, r := range strings.Split(v, ",") {
			if mt, _, err := mime.ParseMediaType(strings.TrimSpace(r)); err == nil && mt == mediaYAML {
				return true
			}
		}
	}
	return false
}

// yamlWriter turns the JSON response a handler writes into YAML: it keeps
// the status and body until finish, then writes the body converted. Watch
// streams are not served as YAML (Kubernetes answers them 406 too).
type yamlWriter struct {
	http.ResponseWriter
	code int
	buf  bytes.Buffer
}

// WriteHeader records the status for finish.
func (y *yamlWriter) WriteHeader(code int) {
	if y.code == 0 {
		y.code = code
	}
}

// Write buffers the JSON body.
func (y *yamlWriter) Write(p []byte) (int, error) {
	if y.code == 0 {
		y.code = http.StatusOK
	}
	return y.buf.Write(p)
}

// finish writes the buffered response as YAML (as it was, if it is not
// JSON).
func (y *yamlWriter) finish() {
	if y.code == 0 {
		return
	}
	body := y.buf.Bytes()
	h := y.ResponseWriter.Header()
	if mt, _, _ := mime.ParseMediaType(h.Get("Content-Type")); mt == mediaJSON {
		if out, err := yaml.JSONToYAML(body); err == nil {
			body = out
			h.Set("Content-Type", mediaYAML)
		}
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	y.ResponseWriter.WriteHeader(y.code)
	_, _ = y.ResponseWriter.Write(body)
}
