package serve

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
)

// apiError is an error in OpenAI's shape, with the HTTP status it goes out
// with. Clients (the openai SDKs) read message, type, param and code.
type apiError struct {
	Status  int     `json:"-"`
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

func (e *apiError) Error() string { return e.Message }

func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusNotFound:
		return "not_found_error"
	case status == http.StatusRequestTimeout || status == http.StatusGatewayTimeout:
		return "timeout_error"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// newError builds an apiError; param and code may be empty.
func newError(status int, param, code, msg string) *apiError {
	e := &apiError{Status: status, Message: msg, Type: errorType(status)}
	if param != "" {
		e.Param = &param
	}
	if code != "" {
		e.Code = &code
	}
	return e
}

func badRequest(param, msg string) *apiError { return newError(http.StatusBadRequest, param, "", msg) }

// writeError answers with err in OpenAI's error shape; errors that are not
// apiErrors are internal (500).
func writeError(w http.ResponseWriter, err error) {
	var ae *apiError
	if !errors.As(err, &ae) {
		ae = newError(http.StatusInternalServerError, "", "", err.Error())
	}
	writeJSON(w, ae.Status, map[string]*apiError{"error": ae})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // the client may be gone; nothing to do about it
}

// scrubPath is err's message with the server's temporary file named "the
// upload": where the server keeps files is no business of its clients.
func scrubPath(err error, path string) string {
	msg := err.Error()
	if path != "" {
		msg = strings.ReplaceAll(msg, path, "the upload")
	}
	return msg
}

// jsonKind names a Go type as the JSON value a client must send.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return jsonKind(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}
