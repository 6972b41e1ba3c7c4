# examples/: the plugin example and the Python exec: kernel.
