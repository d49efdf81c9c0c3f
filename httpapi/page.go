package httpapi

import (
	"embed"
	"io/fs"
	"net/http"
	"path"
)

// ui is the status page: plain HTML, CSS and JavaScript, built into the
// binary and loading nothing from elsewhere, so that it works offline.
//
//go:embed ui
var ui embed.FS

// uiFiles is the ui directory's content.
var uiFiles, _ = fs.Sub(ui, "ui")

// servePage answers GET / with the status page.
func servePage(w http.ResponseWriter, r *http.Request) {
	serveFile(w, r, "index.html")
}

// serveUI answers GET /ui/NAME with one of the page's files (/ui/ is the
// page itself).
func serveUI(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Path
	if name == "" {
		name = "index.html"
	}
	serveFile(w, r, name)
}

var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
}

func serveFile(w http.ResponseWriter, r *http.Request, name string) {
	ct, known := contentTypes[path.Ext(name)]
	b, err := fs.ReadFile(uiFiles, name)
	if !known || err != nil {
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "no such page file: " + name})
		return
	}
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "no-cache")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Write(b)
}
