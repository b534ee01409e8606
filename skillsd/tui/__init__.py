"""``skillsd ui``: a terminal skills picker built on Textual (the optional extra ``skillsd[tui]``).

It drives the daemon through ``skillsd_client`` exactly as an embedding TUI would; the daemon
and the core never import this package.
"""

from skillsd.tui.app import Connector, SkillsApp, shared_connector

__all__ = ["Connector", "SkillsApp", "shared_connector"]
