"""Use the tools from any agent loop, in process: see :mod:`editors.adapters.integration`.

from editors.integration import handle_tool_call, tool_definitions
"""

from editors.adapters.integration import *  # noqa: F403 - this module is its re-export
from editors.adapters.integration import __all__ as __all__
