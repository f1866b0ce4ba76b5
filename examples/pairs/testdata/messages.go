package router

import (
	"errors"
	"fmt"
)

// Handle registers a route.
func (g *Group) Handle(method, path string) error {
	if matched := letters.MatchString(method); !matched {
		panic("http method " + method + " is not valid")
	}
	if len(path) == 0 {
		return fmt.Errorf("empty path for route %q", method)
	}
	name := fmt.Sprintf("route %s at %s", method, path) // not a message
	log.Printf("adding the route %s with its handlers", name)
	return nil
}

func open(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return errors.New("could not open the configuration file")
	}
	return f.Close()
}
