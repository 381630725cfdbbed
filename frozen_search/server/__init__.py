"""The web faces: :mod:`frozen_search.server.http` (FastAPI, REST + MCP streamable HTTP) and
:mod:`frozen_search.server.mcp` (the MCP tools). They parse, call the service and map errors; nothing else."""
