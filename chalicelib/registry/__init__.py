"""What a tenant registers with Crossover: server tools (Lambda, HTTPS, MCP targets) and named agents."""
