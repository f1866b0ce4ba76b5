package evalset

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeGz(t *testing.T, path, body string) {
	t.Helper()
	fh, err := os.Create(path)
	require.NoError(t, err)
	zw := gzip.NewWriter(fh)
	_, err = zw.Write([]byte(body))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, fh.Close())
}

func TestReadSplit(t *testing.T) {
	dir := t.TempDir()
	writeGz(t, filepath.Join(dir, "b.jsonl.gz"), `{"id":"b1","split":"train"}
{"id":"b2","split":"val"}
{"id":"b3","split":"train"}
`)
	writeGz(t, filepath.Join(dir, "a.jsonl.gz"), `{"id":"a1","split":"train"}
{"id":"a2","split":"train"}
`)
	files, err := ReadSplit(dir, "train", 2)
	require.NoError(t, err)
	require.Len(t, files, 2)
	assert.Equal(t, "a", files[0].Name)
	var ids []string
	for _, f := range files {
		for _, c := range f.Cases {
			ids = append(ids, c.ID)
		}
	}
	// The count runs across files: a1, (a2), b1, (b3).
	assert.Equal(t, []string{"a1", "b1"}, ids)

	files, err = ReadSplit(dir, "val", 1)
	require.NoError(t, err)
	assert.Equal(t, "b2", files[1].Cases[0].ID)

	_, err = ReadSplit(dir, "train", 0)
	require.Error(t, err)
	_, err = ReadSplit(t.TempDir(), "train", 1)
	require.Error(t, err)
	writeGz(t, filepath.Join(dir, "c.jsonl.gz"), "{not json\n")
	_, err = ReadSplit(dir, "train", 1)
	require.ErrorIs(t, err, ErrFormat)
}
