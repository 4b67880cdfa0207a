"""The released plugin API headers frozen in released/ (released/README.md)."""

# Oldest first. A release is appended here, with its frozen header and its
# abidw baseline, and none is ever removed or edited.
RELEASES = ["v1_106", "v1_123", "v2", "v3", "v4", "v5", "v6", "v7", "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17"]

def release_copts(release):
    """Compiler options that make released/<release> the only fx header."""
    return ["-Itests/plugin_api/abi/released/" + release]
