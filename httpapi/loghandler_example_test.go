package httpapi_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/procurekit/procure/httpapi"
)

// A server logs its requests through a handler of NewLogHandler: the
// lines slog.NewTextHandler would write, for less.
func ExampleNewLogHandler() {
	var logs bytes.Buffer // a server's os.Stderr
	log := slog.New(httpapi.NewLogHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}, false))
	mux := http.NewServeMux()
	mux.HandleFunc("GET /hello", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "hi") })
	h := httpapi.Observe(mux, httpapi.ObserveOptions{Logger: log})

	req := httptest.NewRequest(http.MethodGet, "/hello", nil)
	req.Header.Set(httpapi.HeaderRequestID, "example-1")
	h.ServeHTTP(httptest.NewRecorder(), req)

	// The line's time and duration vary; the rest does not.
	line := logs.String()
	fmt.Println(line[strings.Index(line, " level="):strings.Index(line, " duration_ms=")])
	// Output:
	//  level=INFO msg=request request_id=example-1 method=GET route=/hello status=200
}
