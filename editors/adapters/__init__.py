"""The ways in to the tools: the ``vfs`` command line (:mod:`.cli`), the MCP server (:mod:`.mcp`),
and in-process provider tool calls (:mod:`.integration`). Each renders :class:`editors.result.ToolResult`
and its failures once, for its own surface.
"""
