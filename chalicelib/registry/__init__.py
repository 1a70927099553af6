"""What a tenant registers with Crossover: server tools (Lambda, HTTPS, MCP targets) and named agents."""

# A registered tool's or agent's name: Converse's toolSpec name rule (and a path segment without escaping).
# Here, not in schemas.py, so the routes declare it without loading the models.
NAME_PATTERN = r"^[A-Za-z][A-Za-z0-9_-]{0,63}$"
