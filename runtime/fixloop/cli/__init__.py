"""The `fixloop` command line: argv in, one call into the library, an exit code out."""
