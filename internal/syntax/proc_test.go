package syntax

import "os"

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	if len(b) == 0 {
		return "", errEmpty
	}
	return string(b), nil
}

func pageSize() int { return os.Getpagesize() }
