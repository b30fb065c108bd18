"""The tools every surface (CLI, agent loop, MCP, native executor) calls through one ToolSet."""
