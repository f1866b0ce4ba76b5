#!/usr/bin/env python3
"""Module docstring that belongs to no unit."""

import os


class Cache:
    """Keep the most recently used values in memory."""

    def __init__(self, size):
        self.size = size
        self.data = {}

    def get(self, key, default=None):
        """Return the cached value for key, or default when it is missing."""
        # move the key to the end so it counts as recently used
        value = self.data.pop(key, default)
        self.data[key] = value
        return value  # type: ignore


# Resolve a path relative to the user's home directory.
def expand(path):
    # if (path == None): return ''
    home = os.path.expanduser("~")

    # join the home directory with the relative part
    return os.path.join(home, path)  # trailing comments are not pairs
