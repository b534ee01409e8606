"""Installing skills from folders, git repositories and archives into every agent's folders,
with a lock file (``docs/install-skills.md``). Blocking I/O (the ``git`` program, downloads,
file copies), beneath the faces: the CLI calls it directly, the runtime off its event loop."""

from skillsd.installing.installer import (
    InstallContext,
    install,
    installed,
    remove,
    restore,
    scan_path,
    update,
)

__all__ = ["InstallContext", "install", "installed", "remove", "restore", "scan_path", "update"]
