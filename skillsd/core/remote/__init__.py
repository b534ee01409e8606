"""Skills over HTTP: the remote wire, what a host verifies, remote roots, token files."""
