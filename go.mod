module github.com/prunekit/pruner

go 1.26.0

require (
	github.com/gomlx/gomlx v0.26.0
	github.com/smacker/go-tree-sitter v0.0.0-20240827094217-dd81d9e9be82
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.49.0
	golang.org/x/text v0.43.0
)

require (
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/gomlx/go-xla v0.1.4 // indirect
	github.com/pkg/errors v0.9.1 // indirect
	github.com/x448/float16 v0.8.4 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/exp v0.0.0-20250819193227-8b4c13bb791b // indirect
	golang.org/x/term v0.38.0 // indirect
	google.golang.org/protobuf v1.36.10 // indirect
	k8s.io/klog/v2 v2.130.1 // indirect
)
