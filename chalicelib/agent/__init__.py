"""The agent: a Bedrock Converse tool-use loop and the tools it may call."""
