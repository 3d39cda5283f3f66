package app

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/harkapp/hark/app/store"
	"github.com/harkapp/hark/engine/models"
)

// Files is the Go-only way in for files: the paths the OS gave the window
// (a drop, the file dialog) and the uploads the bridge received. It is
// never bound to the page (App.Services leaves it out), so no request can
// name a path; the page's Transcription.Add and Models.Import take upload
// ids.
type Files struct {
	deps filesDeps
}

// filesDeps is what Files uses: the items' store, the models folder, the
// uploads, which speech model a name means, and the job queue.
type filesDeps struct {
	db      *store.Store
	emit    Emitter
	store   *models.Store
	uploads *uploads
	models  interface {
		resolveSpeech(arg string) (path, name string, err error)
	}
	transcription interface {
		enqueue(id int64, model string) (Job, error)
	}
}

// Add queues the user's own file at path for transcription with model, as
// Transcription.Add does for uploads; the file stays where it is (never
// deleted) and is replayed from there.
func (f *Files) Add(path, model string) (Job, error) {
	if path == "" {
		return Job{}, errors.New("no file given")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return Job{}, err
	}
	st, err := os.Stat(abs)
	if err != nil {
		return Job{}, fmt.Errorf("cannot read %s: %w", path, err)
	}
	if !st.Mode().IsRegular() {
		return Job{}, fmt.Errorf("%s is not a file", path)
	}
	if _, _, err := f.deps.models.resolveSpeech(model); err != nil {
		return Job{}, err
	}
	r := Item{Kind: KindFile, Title: filepath.Base(abs), SourcePath: abs, Status: StatusRecorded}.row()
	row, err := f.deps.db.InsertItem(r)
	if err != nil {
		return Job{}, err
	}
	return f.deps.transcription.enqueue(row.ID, model)
}

// Import imports the user's model file at path into the models folder.
func (f *Files) Import(path string) (string, error) {
	name, err := f.deps.store.Import(path)
	if err != nil {
		return "", err
	}
	f.deps.emit.Emit(EventModelsChanged, ModelsChange{Imported: name})
	return name, nil
}

// SaveUpload stores r (a file the page sent, named name) under the data
// folder's uploads and returns its id for Transcription.Add or
// Models.Import.
func (f *Files) SaveUpload(name string, r io.Reader) (string, error) {
	return f.deps.uploads.save(name, r)
}
