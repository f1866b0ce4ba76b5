package main

import (
	_ "embed"
	"fmt"
	"os"
	"text/template"
)

// The committed prompts (prompts/*.txt), used unless -reader-prompt or
// -judge-prompt names another file.
var (
	//go:embed prompts/reader.txt
	readerPrompt string
	//go:embed prompts/judge.txt
	judgePrompt string
)

// loadReaderPrompts parses the reader's templates from path (the embedded
// prompts/reader.txt when empty); they must define "first" and "reply".
func loadReaderPrompts(path string) (*template.Template, error) {
	t, err := loadTemplate("reader", path, readerPrompt)
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"first", "reply"} {
		if t.Lookup(name) == nil {
			return nil, fmt.Errorf("reader prompt %s: no {{define %q}} template", path, name)
		}
	}
	return t, nil
}

// loadJudgePrompt parses the judge's template from path (the embedded
// prompts/judge.txt when empty).
func loadJudgePrompt(path string) (*template.Template, error) {
	return loadTemplate("judge", path, judgePrompt)
}

func loadTemplate(name, path, embedded string) (*template.Template, error) {
	text := embedded
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("%s prompt: %w", name, err)
		}
		text = string(data)
	}
	t, err := template.New(name).Option("missingkey=error").Parse(text)
	if err != nil {
		return nil, fmt.Errorf("%s prompt: %w", name, err)
	}
	return t, nil
}
