package hfhub

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseRef: any name parses to a Ref whose cache paths stay inside the
// cache (models--owner--name is one folder, refs/<revision> lies under
// refs/) and that prints back to itself and passes Snapshot's check, or it
// is refused with ErrInvalidName.
func FuzzParseRef(f *testing.F) {
	for _, s := range []string{"acme/tiny", "acme/tiny@main", "acme/tiny@refs/pr/1", "a/b@v1.0",
		"acme/tiny@0123456789abcdef0123456789abcdef01234567", "../x", "a/b@..", "a/b@x/../..", "a/b@/x",
		"a--b/c", "a/b/c", "a/b@", "@", "a/b@c@d", "a/b@c\\..", "a/b@\x00", "a/.b", "a/b.", "a/b@.", "a/b@x/./y"} {
		f.Add(s)
	}
	cache := filepath.Join("/", "cache")
	f.Fuzz(func(t *testing.T, s string) {
		ref, err := ParseRef(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidName) {
				t.Fatalf("%q: %v does not wrap ErrInvalidName", s, err)
			}
			return
		}
		if err := checkRef(ref); err != nil {
			t.Fatalf("%q parsed to %+v, which Snapshot refuses: %v", s, ref, err)
		}
		again, err := ParseRef(ref.String())
		if err != nil || again != ref {
			t.Fatalf("%q parsed to %+v, printed %q parses to %+v, %v", s, ref, ref.String(), again, err)
		}
		c := New(WithCacheDir(cache))
		repoDir := c.RepoDir(ref.Repo)
		if filepath.Dir(repoDir) != cache || !strings.HasPrefix(filepath.Base(repoDir), "models--") {
			t.Fatalf("%q: repository folder %q is not one folder of the cache", s, repoDir)
		}
		refs := filepath.Join(repoDir, "refs")
		p := filepath.Join(refs, filepath.FromSlash(ref.rev()))
		if rel, err := filepath.Rel(refs, p); err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			t.Fatalf("%q: refs file %q is not under %q", s, p, refs)
		}
		for _, r := range ref.rev() {
			if r < 0x20 || r == 0x7f || r == '\\' {
				t.Fatalf("%q: revision %q holds %U", s, ref.rev(), r)
			}
		}
	})
}
