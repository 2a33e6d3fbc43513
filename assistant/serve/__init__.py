"""Serving the assistant: OpenAI-compatible HTTP API and MCP server."""
